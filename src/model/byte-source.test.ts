// Byte sources: Blob and HTTP Range reads, chunked progress, and a GGUF loaded over Range
// requests from a local HTTP server. Not format parsing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobSource, bytesSource, readWithProgress, urlOpener, urlSource } from './byte-source';
import { ModelFormatError } from './errors';
import { loadGgufModel } from './gguf-loader';
import { hfToGguf } from '../../tools/models/hf-to-gguf';
import { syntheticModel } from './testing/synthetic-model-fixtures';
import { writeGguf } from '../../tools/models/gguf-writer';
import { ggufContents } from '../../tools/models/hf-to-gguf';

const gguf = hfToGguf(syntheticModel({ arch: 'qwen2', seed: 4 }), 'q8_0');
let server: Server;
let base = '';
let rangeRequests = 0;

beforeAll(async () => {
  // A static file server that honours single Range requests, like a CDN or the HF hub.
  server = createServer((req, res) => {
    if (req.url !== '/model.gguf') {
      res.writeHead(404).end();
      return;
    }
    const m = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? '');
    if (!m) {
      res.writeHead(200, { 'content-length': gguf.length }).end(Buffer.from(gguf));
      return;
    }
    rangeRequests++;
    const begin = Number(m[1]);
    const end = Math.min(Number(m[2]), gguf.length - 1);
    res.writeHead(206, { 'content-range': `bytes ${begin}-${end}/${gguf.length}` }).end(Buffer.from(gguf.subarray(begin, end + 1)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('byte sources', () => {
  it('reads ranges from a Blob and rejects reads past the end', async () => {
    const src = blobSource(new Blob([new Uint8Array([1, 2, 3, 4, 5])]), 'five.bin');
    expect(src.size).toBe(5);
    expect(await src.read(1, 3)).toEqual(new Uint8Array([2, 3, 4]));
    await expect(src.read(3, 3)).rejects.toBeInstanceOf(ModelFormatError);
  });

  it('reads large ranges in chunks and reports each', async () => {
    const bytes = Uint8Array.from({ length: 40 << 20 }, (_, i) => i & 0xff);
    const chunks: number[] = [];
    const got = await readWithProgress(bytesSource('big', bytes), 3, bytes.length - 3, (n) => chunks.push(n));
    expect(chunks.length).toBe(3);
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(bytes.length - 3);
    expect(got[0]).toBe(3);
    expect(got[got.length - 1]).toBe((bytes.length - 1) & 0xff);
  });

  it('loads a GGUF over HTTP Range requests the same as from memory', async () => {
    const before = rangeRequests;
    const remote = await loadGgufModel(await urlSource(`${base}/model.gguf`));
    const local = await loadGgufModel(bytesSource('model.gguf', gguf));
    expect(rangeRequests - before).toBeGreaterThan(1);
    expect(remote.desc.config).toEqual(local.desc.config);
    for (const [name, t] of local.desc.tensors) expect(Buffer.compare(remote.desc.tensors.get(name)!.data, t.data), name).toBe(0);
  });

  it('names the URL when the server has no such file; a folder opener says null', async () => {
    await expect(urlSource(`${base}/missing.gguf`)).rejects.toThrow(/missing\.gguf: HTTP 404/);
    const open = urlOpener(`${base}/`);
    expect(await open('missing.gguf')).toBeNull();
    expect((await open('model.gguf'))?.size).toBe(gguf.length);
  });

  it('reads GGUF version 2 files like version 3', async () => {
    const { metadata, tensors } = ggufContents(syntheticModel({ arch: 'llama', seed: 1 }), 'q4_0');
    const v2 = await loadGgufModel(bytesSource('v2.gguf', writeGguf(metadata, tensors, { version: 2 })));
    const v3 = await loadGgufModel(bytesSource('v3.gguf', writeGguf(metadata, tensors)));
    expect(v2.header.version).toBe(2);
    expect(v2.desc.config).toEqual(v3.desc.config);
  });

  it('honours a non-default general.alignment', async () => {
    const { metadata, tensors } = ggufContents(syntheticModel({ arch: 'qwen3', seed: 1 }), 'f16');
    const aligned = await loadGgufModel(bytesSource('a64.gguf', writeGguf(metadata, tensors, { alignment: 64 })));
    expect(aligned.header.alignment).toBe(64);
    expect(aligned.header.dataOffset % 64).toBe(0);
  });
});
