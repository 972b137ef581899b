// Random-access byte sources for model files: in-memory bytes, a Blob/File, or a URL read
// with HTTP Range requests, plus chunked reads with progress. Not a cache, not a parser.
import { ModelFormatError } from './errors';

export interface ByteSource {
  /** File name or URL, used in error messages. */
  readonly name: string;
  readonly size: number;
  /** Exactly `length` bytes at `offset`; rejects (ModelFormatError) past the end. */
  read(offset: number, length: number): Promise<Uint8Array>;
}

export interface LoadProgress {
  bytesDone: number;
  bytesTotal: number;
}
export type ProgressCallback = (p: LoadProgress) => void;

/** Reads in pieces this large so progress moves and no single request is huge. */
const CHUNK_BYTES = 16 << 20;

function checkRange(name: string, size: number, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new ModelFormatError(name, `invalid byte range ${offset}+${length}`);
  }
  if (offset + length > size) {
    throw new ModelFormatError(name, `truncated: needs bytes up to ${offset + length} but the file has ${size}`);
  }
}

export function bytesSource(name: string, bytes: Uint8Array): ByteSource {
  return {
    name,
    size: bytes.length,
    async read(offset, length) {
      checkRange(name, bytes.length, offset, length);
      return bytes.subarray(offset, offset + length);
    },
  };
}

export function blobSource(blob: Blob, name = (blob as File).name ?? 'blob'): ByteSource {
  return {
    name,
    size: blob.size,
    async read(offset, length) {
      checkRange(name, blob.size, offset, length);
      return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    },
  };
}

/**
 * A URL read with Range requests. The size comes from a 1-byte ranged GET (HEAD is often
 * not CORS-exposed); servers that ignore Range are read whole once and kept.
 */
export async function urlSource(url: string, fetchFn: typeof fetch = fetch): Promise<ByteSource> {
  const probe = await fetchFn(url, { headers: { Range: 'bytes=0-0' } });
  if (!probe.ok) throw new ModelFormatError(url, `HTTP ${probe.status} ${probe.statusText}`);
  const total = probe.headers.get('content-range')?.match(/\/\s*(\d+)\s*$/)?.[1];
  if (probe.status !== 206 || total === undefined) {
    const whole = new Uint8Array(await probe.arrayBuffer());
    return bytesSource(url, whole);
  }
  await probe.body?.cancel();
  const size = Number(total);
  return {
    name: url,
    size,
    async read(offset, length) {
      checkRange(url, size, offset, length);
      if (length === 0) return new Uint8Array(0);
      const res = await fetchFn(url, { headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
      if (res.status !== 206 && res.status !== 200) throw new ModelFormatError(url, `HTTP ${res.status} reading bytes ${offset}+${length}`);
      let bytes = new Uint8Array(await res.arrayBuffer());
      if (res.status === 200) bytes = bytes.subarray(offset, offset + length);
      if (bytes.length !== length) throw new ModelFormatError(url, `server returned ${bytes.length} of ${length} bytes at ${offset}`);
      return bytes;
    },
  };
}

/** Reads a range into one buffer in CHUNK_BYTES pieces, reporting cumulative progress. */
export async function readWithProgress(
  src: ByteSource,
  offset: number,
  length: number,
  onChunk?: (bytes: number) => void,
): Promise<Uint8Array> {
  checkRange(src.name, src.size, offset, length);
  if (length <= CHUNK_BYTES) {
    const bytes = await src.read(offset, length);
    onChunk?.(length);
    return bytes;
  }
  const out = new Uint8Array(length);
  for (let done = 0; done < length; ) {
    const n = Math.min(CHUNK_BYTES, length - done);
    out.set(await src.read(offset + done, n), done);
    done += n;
    onChunk?.(n);
  }
  return out;
}

/** Sums chunk counts across several reads into one (bytesDone, bytesTotal) stream. */
export function progressCounter(bytesTotal: number, onProgress?: ProgressCallback): (bytes: number) => void {
  let bytesDone = 0;
  onProgress?.({ bytesDone, bytesTotal });
  return (bytes) => {
    bytesDone += bytes;
    onProgress?.({ bytesDone, bytesTotal });
  };
}

/**
 * The files of one model (a folder, dropped files, a repo URL), opened by relative name.
 * Resolves null when the file does not exist.
 */
export type FileOpener = (relativeName: string) => Promise<ByteSource | null>;

/** Opens files from an in-memory map (dropped files, tests). */
export function mapOpener(files: ReadonlyMap<string, Uint8Array | Blob>): FileOpener {
  return async (name) => {
    const f = files.get(name);
    if (f === undefined) return null;
    return f instanceof Uint8Array ? bytesSource(name, f) : blobSource(f, name);
  };
}

/** Opens files under a base URL (e.g. https://huggingface.co/ORG/REPO/resolve/main); 404 -> null. */
export function urlOpener(baseUrl: string, fetchFn: typeof fetch = fetch): FileOpener {
  return async (name) => {
    try {
      return await urlSource(`${baseUrl.replace(/\/+$/, '')}/${name}`, fetchFn);
    } catch (e) {
      if (e instanceof ModelFormatError && /: HTTP 404\b/.test(e.message)) return null;
      throw e;
    }
  };
}

/**
 * Reads a small text file (JSON) whole, refusing anything above maxBytes. `vetBytes` sees the
 * raw bytes first and may refuse them before any text is decoded.
 */
export async function readText(src: ByteSource, maxBytes: number, vetBytes?: (bytes: Uint8Array) => void): Promise<string> {
  if (src.size > maxBytes) throw new ModelFormatError(src.name, `${src.size} bytes is larger than the ${maxBytes}-byte limit for this file`);
  const bytes = await src.read(0, src.size);
  vetBytes?.(bytes);
  return new TextDecoder().decode(bytes);
}

export async function readJson(src: ByteSource, maxBytes: number, vetBytes?: (bytes: Uint8Array) => void): Promise<unknown> {
  const text = await readText(src, maxBytes, vetBytes);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ModelFormatError(src.name, `invalid JSON: ${(e as Error).message}`);
  }
}
