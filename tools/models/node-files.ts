// Node file access for model tools and tests: a ByteSource over an fs file handle and a
// FileOpener for a folder. Node only; the browser uses blobSource/urlSource instead.
import { existsSync, openSync, readSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import type { ByteSource, FileOpener } from '../../src/model/byte-source';
import { ModelFormatError } from '../../src/model/errors';

/** Reads with positioned reads on each call; the descriptor lives for the process. */
export function fileSource(path: string, name = path): ByteSource {
  const fd = openSync(path, 'r');
  const size = fstatSync(fd).size;
  return {
    name,
    size,
    async read(offset, length) {
      if (offset < 0 || length < 0 || offset + length > size) {
        throw new ModelFormatError(name, `truncated: needs bytes up to ${offset + length} but the file has ${size}`);
      }
      const out = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, out, done, length - done, offset + done);
        if (n === 0) throw new ModelFormatError(name, `file shrank while reading at ${offset + done}`);
        done += n;
      }
      return out;
    },
  };
}

export function folderOpener(dir: string): FileOpener {
  return async (name) => {
    const path = join(dir, name);
    return existsSync(path) ? fileSource(path, name) : null;
  };
}

