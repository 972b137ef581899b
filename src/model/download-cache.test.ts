// cachedUrlSource/cachedUrlOpener over a served byte map: one download per file, range reads
// from the store afterwards, 404 as absent, quota failures falling back to range requests.
import { describe, expect, it } from 'vitest';
import { cachedUrlOpener, cachedUrlSource, type BlobStore } from './download-cache';

function memoryStore(): BlobStore & { entries: Map<string, Blob> } {
  const entries = new Map<string, Blob>();
  return {
    entries,
    get: async (url) => entries.get(url) ?? null,
    put: async (url, response) => void entries.set(url, await response.blob()),
  };
}

/** A file server with Range support that counts requests per URL. */
function server(files: Record<string, Uint8Array>, lie?: { url: string; length: number }) {
  const requests: string[] = [];
  const fetchFn = (async (input: string | URL, init?: RequestInit) => {
    const url = String(input);
    requests.push(url);
    const body = files[url];
    if (!body) return new Response('missing', { status: 404, statusText: 'Not Found' });
    const range = new Headers(init?.headers).get('range')?.match(/bytes=(\d+)-(\d+)/);
    if (range) {
      const [start, end] = [Number(range[1]), Number(range[2])];
      return new Response(body.slice(start, end + 1) as BodyInit, { status: 206, headers: { 'content-range': `bytes ${start}-${end}/${body.length}` } });
    }
    const length = lie?.url === url ? lie.length : body.length;
    return new Response(body as BodyInit, { headers: { 'content-length': String(length) } });
  }) as typeof fetch;
  return { fetchFn, requests };
}

const bytes = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) & 255);

describe('cachedUrlSource', () => {
  it('downloads a file once, keeps it, and serves ranges from the store', async () => {
    const { fetchFn, requests } = server({ 'https://h/m.gguf': bytes });
    const store = memoryStore();
    const progress: number[] = [];
    const first = await cachedUrlSource('https://h/m.gguf', store, fetchFn, (p) => progress.push(p.bytesDone));
    expect(await first.read(100, 50)).toEqual(bytes.slice(100, 150));
    expect(progress.at(-1)).toBe(bytes.length);
    expect(store.entries.get('https://h/m.gguf')?.size).toBe(bytes.length);
    const second = await cachedUrlSource('https://h/m.gguf', store, fetchFn);
    expect(await second.read(4990, 10)).toEqual(bytes.slice(4990));
    expect(requests).toEqual(['https://h/m.gguf']);
  });

  it('falls back to range requests when the store refuses the file', async () => {
    const { fetchFn } = server({ 'https://h/m.gguf': bytes });
    const full: BlobStore = { get: async () => null, put: async () => { throw new DOMException('quota', 'QuotaExceededError'); } };
    const src = await cachedUrlSource('https://h/m.gguf', full, fetchFn);
    expect(src.size).toBe(bytes.length);
    expect(await src.read(10, 20)).toEqual(bytes.slice(10, 30));
  });

  it('rejects a download that ends short of its Content-Length', async () => {
    const { fetchFn } = server({ 'https://h/m.gguf': bytes }, { url: 'https://h/m.gguf', length: 9000 });
    await expect(cachedUrlSource('https://h/m.gguf', memoryStore(), fetchFn)).rejects.toThrow(/download ended after 5000 of 9000 bytes/);
  });
});

describe('cachedUrlOpener', () => {
  it('opens files under a base URL through the store and reports missing ones as null', async () => {
    const { fetchFn } = server({ 'https://h/repo/config.json': new TextEncoder().encode('{}') });
    const store = memoryStore();
    const open = cachedUrlOpener('https://h/repo/', store, fetchFn);
    expect((await open('config.json'))?.size).toBe(2);
    expect(await open('model.safetensors.index.json')).toBeNull();
    expect([...store.entries.keys()]).toEqual(['https://h/repo/config.json']);
  });
});
