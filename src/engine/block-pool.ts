// BlockPool: ids of the runner's preallocated KV blocks, their reference counts, and the
// prefix cache of full blocks. Bookkeeping only: it never touches KV memory or picks requests.
import type { KvBlockStats } from './events';

/**
 * Prefix-cache keys are exact, not lossy hashes: a full block is keyed by its parent's cache
 * serial plus its own token ids. Serials are never reused, so a key naming an evicted parent can
 * never match again, and a collision cannot make one sequence read another's KV.
 */
export const ROOT_SERIAL = 0;

export class BlockPool {
  readonly numBlocks: number;
  readonly blockSize: number;
  private readonly refCounts: Int32Array; // [numBlocks]
  private readonly freeStack: Int32Array; // [numBlocks] ids of free, uncached blocks
  private numFreeStack = 0;
  /** Cached blocks nobody references, least recently released first (Map keeps insertion order). */
  private readonly evictable = new Map<number, true>();
  private readonly cacheKeyOf: Array<string | undefined>; // [numBlocks]
  private readonly serialOf: Float64Array; // [numBlocks] 0 when not cached
  private readonly cache = new Map<string, number>();
  private nextSerial = ROOT_SERIAL + 1;
  private numUsed = 0;
  private numShared = 0;

  constructor(numBlocks: number, blockSize: number) {
    if (!Number.isInteger(numBlocks) || numBlocks < 2) throw new RangeError(`numBlocks ${numBlocks} < 2`);
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError(`blockSize ${blockSize} < 1`);
    this.numBlocks = numBlocks;
    this.blockSize = blockSize;
    this.refCounts = new Int32Array(numBlocks);
    this.freeStack = new Int32Array(numBlocks);
    this.cacheKeyOf = new Array<string | undefined>(numBlocks).fill(undefined);
    this.serialOf = new Float64Array(numBlocks);
    // block 0 is reserved (runners may use it as a scratch/padding target), so it is never pushed;
    // lower ids are pushed last so they are handed out first
    for (let id = numBlocks - 1; id >= 1; id--) this.freeStack[this.numFreeStack++] = id;
  }

  /** Blocks that can hold KV at all (block 0 excluded). */
  get numUsable(): number {
    return this.numBlocks - 1;
  }

  /** Blocks allocate() can hand out now, evicting cached ones if it must. */
  get numAvailable(): number {
    return this.numFreeStack + this.evictable.size;
  }

  refCount(blockId: number): number {
    return this.refCounts[blockId];
  }

  isCached(blockId: number): boolean {
    return this.cacheKeyOf[blockId] !== undefined;
  }

  /** Cache serial of a cached block (0 when it is not cached). */
  serial(blockId: number): number {
    return this.serialOf[blockId];
  }

  /** Hands out `count` blocks with refCount 1; throws if fewer are available (check first). */
  allocate(count: number): number[] {
    if (count > this.numAvailable) throw new Error(`allocate(${count}) with ${this.numAvailable} available`);
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      let id: number;
      if (this.numFreeStack > 0) {
        id = this.freeStack[--this.numFreeStack];
      } else {
        // the free list ran dry: evict the least recently released cached block
        id = this.evictable.keys().next().value as number;
        this.evictable.delete(id);
        this.uncache(id);
      }
      this.refCounts[id] = 1;
      this.numUsed++;
      ids.push(id);
    }
    return ids;
  }

  /** Takes one more reference on each block (prefix-cache hits); revives evictable ones. */
  touch(blockIds: readonly number[]): void {
    for (const id of blockIds) {
      const ref = this.refCounts[id];
      if (ref === 0) {
        if (!this.evictable.delete(id)) throw new Error(`touch(${id}): block is free and not cached`);
        this.numUsed++;
      } else if (ref === 1) {
        this.numShared++;
      }
      this.refCounts[id] = ref + 1;
    }
  }

  /**
   * Drops one reference per block, in the order given; pass a sequence's blocks tail first so
   * its tail is evicted before its head (heads are the likelier shared prefixes).
   */
  release(blockIds: readonly number[]): void {
    for (const id of blockIds) {
      const ref = this.refCounts[id];
      if (ref <= 0 || id === 0) throw new Error(`release(${id}): block is not in use`);
      this.refCounts[id] = ref - 1;
      if (ref === 2) this.numShared--;
      if (ref === 1) {
        this.numUsed--;
        if (this.cacheKeyOf[id] !== undefined) this.evictable.set(id, true);
        else this.freeStack[this.numFreeStack++] = id;
      }
    }
  }

  /** The cached block holding `tokenIds` right after the block with serial `parentSerial`. */
  lookup(parentSerial: number, tokenIds: ArrayLike<number>): number | undefined {
    return this.cache.get(cacheKey(parentSerial, tokenIds));
  }

  /**
   * Registers a full, computed, referenced block under its prefix. If an equal block is already
   * cached (two sequences computed the same prefix at once) this one stays uncached; either way
   * the serial of the cached block for this prefix is returned, to chain the next block from.
   */
  cacheBlock(blockId: number, parentSerial: number, tokenIds: ArrayLike<number>): number {
    if (tokenIds.length !== this.blockSize) throw new Error('only full blocks are cached');
    if (this.refCounts[blockId] <= 0) throw new Error(`cacheBlock(${blockId}): block is not in use`);
    if (this.cacheKeyOf[blockId] !== undefined) return this.serialOf[blockId];
    const key = cacheKey(parentSerial, tokenIds);
    const existing = this.cache.get(key);
    if (existing !== undefined) return this.serialOf[existing];
    const serial = this.nextSerial++;
    this.cache.set(key, blockId);
    this.cacheKeyOf[blockId] = key;
    this.serialOf[blockId] = serial;
    return serial;
  }

  /** Forgets every cached prefix; evictable blocks return to the free list. */
  clearCache(): void {
    for (const id of this.evictable.keys()) this.freeStack[this.numFreeStack++] = id;
    this.evictable.clear();
    for (const id of this.cache.values()) {
      this.cacheKeyOf[id] = undefined;
      this.serialOf[id] = 0;
    }
    this.cache.clear();
  }

  stats(): KvBlockStats {
    return {
      numBlocks: this.numUsable,
      numUsed: this.numUsed,
      numFree: this.numAvailable,
      numShared: this.numShared,
      numCached: this.cache.size,
    };
  }

  private uncache(id: number): void {
    const key = this.cacheKeyOf[id];
    if (key === undefined) return;
    this.cache.delete(key);
    this.cacheKeyOf[id] = undefined;
    this.serialOf[id] = 0;
  }
}

function cacheKey(parentSerial: number, tokenIds: ArrayLike<number>): string {
  let key = `${parentSerial}:`;
  for (let i = 0; i < tokenIds.length; i++) key += `${tokenIds[i]},`;
  return key;
}
