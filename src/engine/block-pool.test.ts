// Tests of BlockPool: reserved block 0, reference counts, the prefix cache and its LRU eviction.
// Pool bookkeeping only; scheduling and KV contents are tested elsewhere.
import { describe, expect, it } from 'vitest';
import { BlockPool, ROOT_SERIAL } from './block-pool';

describe('BlockPool', () => {
  it('hands out every block but block 0, and refuses to over-allocate', () => {
    const pool = new BlockPool(9, 4);
    const ids = pool.allocate(8);
    expect(new Set(ids).size).toBe(8);
    expect(ids).not.toContain(0);
    expect(pool.numAvailable).toBe(0);
    expect(() => pool.allocate(1)).toThrow();
    pool.release(ids);
    expect(pool.stats()).toMatchObject({ numBlocks: 8, numUsed: 0, numFree: 8, numShared: 0 });
  });

  it('counts references and shared blocks, and rejects double release', () => {
    const pool = new BlockPool(5, 2);
    const [a] = pool.allocate(1);
    pool.cacheBlock(a, ROOT_SERIAL, [1, 2]);
    pool.touch([a]);
    expect(pool.refCount(a)).toBe(2);
    expect(pool.stats().numShared).toBe(1);
    pool.release([a]);
    expect(pool.stats()).toMatchObject({ numUsed: 1, numShared: 0 });
    pool.release([a]);
    expect(pool.stats().numUsed).toBe(0);
    expect(() => pool.release([a])).toThrow();
  });

  it('chains cache keys through the parent block', () => {
    const pool = new BlockPool(8, 2);
    const [a, b] = pool.allocate(2);
    const serialA = pool.cacheBlock(a, ROOT_SERIAL, [1, 2]);
    pool.cacheBlock(b, serialA, [3, 4]);
    expect(pool.lookup(ROOT_SERIAL, [1, 2])).toBe(a);
    expect(pool.lookup(serialA, [3, 4])).toBe(b);
    // the same tokens after a different parent are a different block
    expect(pool.lookup(ROOT_SERIAL, [3, 4])).toBeUndefined();
    // a second block with an already-cached prefix stays uncached and reports the canonical serial
    const [c] = pool.allocate(1);
    expect(pool.cacheBlock(c, ROOT_SERIAL, [1, 2])).toBe(serialA);
    expect(pool.isCached(c)).toBe(false);
  });

  it('keeps released cached blocks until the free list runs dry, then evicts least recently released first', () => {
    const pool = new BlockPool(5, 1); // 4 usable
    const [a, b, c] = pool.allocate(3);
    const sa = pool.cacheBlock(a, ROOT_SERIAL, [10]);
    const sb = pool.cacheBlock(b, sa, [11]);
    pool.cacheBlock(c, sb, [12]);
    pool.release([c, b, a]); // tail first
    expect(pool.stats()).toMatchObject({ numUsed: 0, numFree: 4, numCached: 3 });
    const [d] = pool.allocate(1); // the never-cached block goes first
    expect([a, b, c]).not.toContain(d);
    expect(pool.stats().numCached).toBe(3);
    const [e] = pool.allocate(1); // now the least recently released cached block: the tail c
    expect(e).toBe(c);
    expect(pool.lookup(sb, [12])).toBeUndefined();
    expect(pool.lookup(ROOT_SERIAL, [10])).toBe(a);
    // a hit revives a cached free block so it cannot be evicted while in use
    pool.touch([a]);
    const [f] = pool.allocate(1);
    expect(f).toBe(b);
    expect(pool.numAvailable).toBe(0);
    expect(pool.refCount(a)).toBe(1);
  });

  it('never matches a child of an evicted parent once the parent block is reused', () => {
    const pool = new BlockPool(3, 1); // 2 usable
    const [a, b] = pool.allocate(2);
    const sa = pool.cacheBlock(a, ROOT_SERIAL, [1]);
    pool.cacheBlock(b, sa, [2]);
    pool.release([a]); // parent released first, so it is evicted first
    pool.release([b]);
    const [reused] = pool.allocate(1);
    expect(reused).toBe(a);
    const sNew = pool.cacheBlock(reused, ROOT_SERIAL, [7]);
    expect(sNew).not.toBe(sa);
    expect(pool.lookup(sNew, [2])).toBeUndefined();
  });

  it('clearCache returns cached free blocks to the free list', () => {
    const pool = new BlockPool(4, 1);
    const [a] = pool.allocate(1);
    pool.cacheBlock(a, ROOT_SERIAL, [5]);
    pool.release([a]);
    pool.clearCache();
    expect(pool.stats()).toMatchObject({ numCached: 0, numFree: 3 });
    expect(pool.lookup(ROOT_SERIAL, [5])).toBeUndefined();
  });
});
