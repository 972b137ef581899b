// Tests of KVCacheManager.releaseRejectedSlots: after a verify step, the tail blocks only rejected
// drafts used go back to the pool, computed blocks stay (and stay cached), nothing else changes.
import { describe, expect, it } from 'vitest';
import { BlockPool } from './block-pool';
import { KVCacheManager } from './kv-manager';

describe('releaseRejectedSlots', () => {
  it('frees the blocks past the known tokens, tail first, and keeps computed and cached ones', () => {
    const pool = new BlockPool(16, 4);
    const kv = new KVCacheManager(pool);
    const request = { requestId: 'r', tokenIds: [1, 2, 3, 4, 5], numComputedTokens: 0 };
    expect(kv.allocateSlots(request, 5)).toHaveLength(2); // the prompt
    request.numComputedTokens = 5;
    request.tokenIds.push(6);
    // position 5 fed plus 6 drafts: positions 5..11, a third block
    expect(kv.allocateSlots(request, 7)).toHaveLength(1);
    expect(kv.blockTable('r')).toHaveLength(3);
    // only the first draft accepted: 7 computed, 8 known tokens; block 2 held rejected drafts only
    request.numComputedTokens = 7;
    request.tokenIds.push(7, 8);
    kv.releaseRejectedSlots(request);
    kv.cacheComputedBlocks(request);
    expect(kv.blockTable('r')).toHaveLength(2);
    expect(pool.stats()).toMatchObject({ numUsed: 2, numCached: 1 });
    // nothing more to give back
    kv.releaseRejectedSlots(request);
    expect(kv.blockTable('r')).toHaveLength(2);
    kv.free('r');
    expect(pool.stats().numUsed).toBe(0);
  });

  it('keeps cached blocks whatever the request claims', () => {
    const pool = new BlockPool(16, 4);
    const kv = new KVCacheManager(pool);
    const request = { requestId: 'r', tokenIds: [1, 2, 3, 4, 5, 6, 7, 8, 9], numComputedTokens: 8 };
    kv.allocateSlots({ ...request, numComputedTokens: 0 }, 9);
    kv.cacheComputedBlocks(request);
    // claim fewer known tokens than computed: the cached second block would be released
    expect(() => kv.releaseRejectedSlots({ ...request, tokenIds: [1, 2, 3] })).not.toThrow();
    expect(kv.blockTable('r')).toHaveLength(2); // cached blocks are always kept
  });
});
