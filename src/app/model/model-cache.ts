// The browser's download cache of model files: Cache Storage entries named 'cohort-models',
// listed with their sizes and deleted one by one or all together. Not a fetcher.
import { MODEL_CACHE_NAME } from '../../protocol/api';

export interface CachedFile {
  url: string;
  /** Bytes; from Content-Length when present, else the body's size. */
  size: number;
}

function available(): boolean {
  return typeof caches !== 'undefined';
}

export async function listCachedFiles(): Promise<CachedFile[]> {
  if (!available() || !(await caches.has(MODEL_CACHE_NAME))) return [];
  const cache = await caches.open(MODEL_CACHE_NAME);
  const requests = await cache.keys();
  const files = await Promise.all(
    requests.map(async (request) => {
      const response = await cache.match(request);
      const header = Number(response?.headers.get('content-length'));
      const size = Number.isFinite(header) && header > 0 ? header : ((await response?.blob())?.size ?? 0);
      return { url: request.url, size };
    }),
  );
  return files.sort((a, b) => a.url.localeCompare(b.url));
}

export async function deleteCachedFile(url: string): Promise<void> {
  if (!available()) return;
  const cache = await caches.open(MODEL_CACHE_NAME);
  await cache.delete(url);
}

export async function clearCachedFiles(): Promise<void> {
  if (available()) await caches.delete(MODEL_CACHE_NAME);
}
