// The worker's download store: Cache Storage ('cohort-models'), which the page lists and
// prunes. Not used when the browser has no Cache Storage (then files are read in ranges).
import type { BlobStore } from '../src/model/download-cache';
import { MODEL_CACHE_NAME } from '../src/protocol/api';

export function cacheStorageStore(): BlobStore | undefined {
  if (typeof caches === 'undefined') return undefined;
  return {
    async get(url) {
      const cache = await caches.open(MODEL_CACHE_NAME);
      const hit = await cache.match(url);
      // The Blob of a cached response is backed by the cache's storage, not by memory.
      return hit ? hit.blob() : null;
    },
    async put(url, response) {
      const cache = await caches.open(MODEL_CACHE_NAME);
      await cache.put(url, response);
    },
  };
}
