// Remote model files downloaded once, whole, into a blob store (the worker passes Cache Storage)
// and read back in ranges from the stored Blob. Not a parser; local files never pass through it.
import { blobSource, urlSource, type ByteSource, type FileOpener, type ProgressCallback } from './byte-source';
import { ModelFormatError } from './errors';

/** Where downloads are kept: Cache Storage in the browser, a Map in tests. */
export interface BlobStore {
  get(url: string): Promise<Blob | null>;
  /** Stores the response's body under `url`; resolves once it is fully written. */
  put(url: string, response: Response): Promise<void>;
}

/**
 * A URL's bytes from the store, downloading the whole file first on a miss. Whole files, as
 * WebLLM does: the loader reads every tensor anyway, and a stored Blob is disk-backed, so a
 * multi-GB model never sits in memory. If the store refuses (quota), reads fall back to ranges.
 */
export async function cachedUrlSource(url: string, store: BlobStore, fetchFn: typeof fetch = fetch, onProgress?: ProgressCallback): Promise<ByteSource> {
  const hit = await store.get(url);
  if (hit) return blobSource(hit, url);
  const response = await fetchFn(url);
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new ModelFormatError(url, `HTTP ${response.status} ${response.statusText}`);
  }
  const total = Number(response.headers.get('content-length')) || 0;
  let done = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        done += chunk.byteLength;
        onProgress?.({ bytesDone: done, bytesTotal: Math.max(total, done) });
        controller.enqueue(chunk);
      },
    }),
  );
  const headers: Record<string, string> = { 'content-type': response.headers.get('content-type') ?? 'application/octet-stream' };
  if (total > 0) headers['content-length'] = String(total);
  try {
    await store.put(url, new Response(counted, { headers }));
  } catch {
    return urlSource(url, fetchFn);
  }
  const stored = await store.get(url);
  if (!stored) return urlSource(url, fetchFn);
  if (total > 0 && stored.size !== total) throw new ModelFormatError(url, `download ended after ${stored.size} of ${total} bytes`);
  return blobSource(stored, url);
}

/** Like urlOpener, through the store: files under a base URL, 404 -> null. */
export function cachedUrlOpener(baseUrl: string, store: BlobStore, fetchFn: typeof fetch = fetch, onProgress?: ProgressCallback): FileOpener {
  return async (name) => {
    try {
      return await cachedUrlSource(`${baseUrl.replace(/\/+$/, '')}/${name}`, store, fetchFn, onProgress);
    } catch (e) {
      if (e instanceof ModelFormatError && /: HTTP 404\b/.test(e.message)) return null;
      throw e;
    }
  };
}
