// Tests of KVCacheManager: releaseRejectedSlots after a verify step (the tail blocks only rejected
// drafts used go back), and a sliding-window group giving back out-of-window blocks while prefixes still hit.
import { describe, expect, it } from 'vitest';
import { BlockPool } from './block-pool';
import { KVCacheManager } from './kv-manager';
import { slidingGroupBlocks } from './types';

describe('releaseRejectedSlots', () => {
  it('frees the blocks past the known tokens, tail first, and keeps computed and cached ones', () => {
    const pool = new BlockPool(16, 4);
    const kv = new KVCacheManager([{ pool, window: null }]);
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
    const kv = new KVCacheManager([{ pool, window: null }]);
    const request = { requestId: 'r', tokenIds: [1, 2, 3, 4, 5, 6, 7, 8, 9], numComputedTokens: 8 };
    kv.allocateSlots({ ...request, numComputedTokens: 0 }, 9);
    kv.cacheComputedBlocks(request);
    // claim fewer known tokens than computed: the cached second block would be released
    expect(() => kv.releaseRejectedSlots({ ...request, tokenIds: [1, 2, 3] })).not.toThrow();
    expect(kv.blockTable('r')).toHaveLength(2); // cached blocks are always kept
  });
});

describe('a sliding-window group', () => {
  /** Blocks of 4 positions, a window of 6: a query at p sees p - 5 .. p. */
  function windowed(numWindowBlocks = 16) {
    const pool = new BlockPool(32, 4);
    const windowPool = new BlockPool(numWindowBlocks, 4);
    return { pool, windowPool, kv: new KVCacheManager([{ pool, window: null }, { pool: windowPool, window: 6 }]) };
  }
  /** Feeds `n` more tokens of `request` as one step would: allocate, compute, cache and release. */
  function feed(kv: KVCacheManager, request: { requestId: string; tokenIds: number[]; numComputedTokens: number }, n: number): number[] | null {
    const ids = kv.allocateSlots(request, n);
    if (ids === null) return null;
    request.numComputedTokens += n;
    kv.cacheComputedBlocks(request);
    return ids;
  }

  it('gives back the blocks out of every later query\'s window and keeps the full table whole', () => {
    const { pool, windowPool, kv } = windowed();
    const request = { requestId: 'r', tokenIds: Array.from({ length: 40 }, (_, i) => i + 1), numComputedTokens: 0 };
    feed(kv, request, 13); // positions 0..12: the next query (13) sees 8..13, blocks 2 and 3
    expect(kv.blockTable('r')).toHaveLength(4);
    expect(kv.blockTable('r', 1).map((id) => id !== 0)).toEqual([false, false, true, true]);
    for (let i = 0; i < 20; i++) feed(kv, request, 1); // decode to 33 computed: the next query sees 28..33
    expect(kv.blockTable('r')).toHaveLength(9);
    expect(kv.blockTable('r', 1).filter((id) => id !== 0)).toHaveLength(2); // blocks 7 and 8
    expect(windowPool.stats().numUsed).toBe(2);
    expect(pool.stats().numUsed).toBe(9);
    kv.free('r');
    expect([pool.stats().numUsed, windowPool.stats().numUsed]).toEqual([0, 0]);
  });

  it("counts a step's window blocks at admission: a chunk longer than the window needs them all", () => {
    const { windowPool, kv } = windowed(4); // 3 usable window blocks
    const request = { requestId: 'r', tokenIds: Array.from({ length: 20 }, (_, i) => i + 1), numComputedTokens: 0 };
    expect(kv.allocateSlots(request, 16)).toBeNull(); // 4 blocks at once: more than the window pool has
    expect(windowPool.stats().numUsed).toBe(0); // and nothing changed
    expect(feed(kv, request, 12)).toHaveLength(3);
    expect(windowPool.stats().numUsed).toBe(2); // block 0 gone: the next query (12) sees 7..12
    expect(feed(kv, request, 4)).toHaveLength(1);
  });

  it('hits a cached prefix only while the window blocks its next token sees are cached, and takes only those', () => {
    const { windowPool, kv } = windowed();
    const shared = Array.from({ length: 17 }, (_, i) => 50 + i);
    const a = { requestId: 'a', tokenIds: [...shared, 1], numComputedTokens: 0 };
    feed(kv, a, 18);
    kv.free('a'); // every block of 'a' is cached and evictable now
    const b = { requestId: 'b', tokenIds: [...shared, 2, 3], numComputedTokens: 0 };
    const hit = kv.findCachedPrefix(b.tokenIds);
    expect(hit).toHaveLength(4); // 16 positions; the next token (16) sees 11..16: window blocks 2 and 3
    expect(kv.allocateSlots(b, 3, hit)).toHaveLength(1);
    expect(kv.blockTable('b', 1).map((id) => id !== 0)).toEqual([false, false, true, true, true]);
    expect(windowPool.stats().numUsed).toBe(3);
    kv.free('b');
    // with the window group's cache gone, the full blocks alone cannot serve a hit
    windowPool.clearCache();
    expect(kv.findCachedPrefix(b.tokenIds)).toEqual([]);
  });

  it('sizes a window pool that a full step of every row cannot exhaust', () => {
    // 16 rows each seeing 511 earlier positions, plus one step of 512 tokens: 16 * 34 + 32 + block 0
    expect(slidingGroupBlocks(512, 16, 16, 512)).toBe(1 + 16 * 34 + 32);
    expect(slidingGroupBlocks(1, 4, 1, 1)).toBe(1 + 2 + 1);
  });
});
