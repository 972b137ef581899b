// KVCacheManager: each request's append-only block table, slot allocation, and prefix reuse of
// full cached blocks, plus a window group's table for sliding-window layers that gives back blocks
// once they fall out of the window. It decides nothing about which request runs; allocateSlots() just says no.
import { BlockPool, ROOT_SERIAL } from './block-pool';

/**
 * The sliding-window layers' own blocks (gemma's local layers): the same logical blocks as the
 * full table, in a pool of their own whose blocks hold only those layers' K/V. A position a query
 * can no longer see (before numComputedTokens - window + 1) needs no block there: such blocks go
 * back, so a session holds about window / blockSize of them whatever its length. This follows
 * llama.cpp's SWA cache and vLLM's hybrid KV groups: one table per group, same logical blocks.
 */
export interface KvWindowGroup {
  pool: BlockPool;
  /** Positions each query sees (itself included): the largest window of the group's layers. */
  window: number;
}


/** What the manager needs to see of a request. */
export interface KvRequestView {
  readonly requestId: string;
  /** Every known token: prompt plus generated. */
  readonly tokenIds: readonly number[];
  /** Tokens whose KV is written (positions 0..numComputedTokens-1). */
  readonly numComputedTokens: number;
}

interface RequestBlocks {
  /** Block table: position p lives in blockIds[floor(p / blockSize)]. Only ever appended to. */
  blockIds: number[];
  /** [numCachedBlocks] cache serial of the canonical cached block for each prefix block. */
  chainSerials: number[];
  /**
   * The window group's table, as long as blockIds: appended to in step with it; an entry turns
   * 0 (block 0, never read) once out of the window, and stays 0. Empty without a window group.
   */
  windowIds: number[];
  /** Window entries before this logical block are 0. */
  windowStart: number;
}

export class KVCacheManager {
  readonly pool: BlockPool;
  readonly blockSize: number;
  readonly enablePrefixCaching: boolean;
  readonly windowGroup: KvWindowGroup | null;
  private readonly tables = new Map<string, RequestBlocks>();

  constructor(pool: BlockPool, options: { enablePrefixCaching?: boolean; windowGroup?: KvWindowGroup | null } = {}) {
    this.pool = pool;
    this.blockSize = pool.blockSize;
    this.enablePrefixCaching = options.enablePrefixCaching ?? true;
    this.windowGroup = options.windowGroup ?? null;
    if (this.windowGroup && (this.windowGroup.pool.blockSize !== pool.blockSize || !(this.windowGroup.window >= 1))) {
      throw new RangeError(`a window group needs blocks of ${pool.blockSize} positions and a window >= 1`);
    }
  }

  /** The first logical block a query at `position` can see in the window group (0 without one). */
  private firstWindowBlock(position: number): number {
    if (!this.windowGroup) return 0;
    return Math.floor(Math.max(0, position - this.windowGroup.window + 1) / this.blockSize);
  }

  /**
   * The window group's cached blocks a request reusing `fullHits` needs (logical blocks from the
   * first its next token sees up to the hits' end), or null when one is no longer cached. Keyed
   * by the full pool's serials, which name a prefix exactly.
   */
  private windowHits(tokenIds: readonly number[], fullHits: readonly number[]): number[] | null {
    const group = this.windowGroup;
    if (!group) return [];
    const ids: number[] = [];
    for (let i = this.firstWindowBlock(fullHits.length * this.blockSize); i < fullHits.length; i++) {
      const parentSerial = i === 0 ? ROOT_SERIAL : this.pool.serial(fullHits[i - 1]!);
      const id = group.pool.lookup(parentSerial, tokenIds.slice(i * this.blockSize, (i + 1) * this.blockSize));
      if (id === undefined) return null;
      ids.push(id);
    }
    return ids;
  }

  /** Most tokens one request can ever hold. */
  get capacityTokens(): number {
    return this.pool.numUsable * this.blockSize;
  }

  /**
   * Cached full blocks matching the start of `tokenIds` (no references taken). At least one
   * token is always left to compute, since the last one must be fed to sample the next.
   */
  findCachedPrefix(tokenIds: readonly number[]): number[] {
    if (!this.enablePrefixCaching) return [];
    const hits: number[] = [];
    const maxBlocks = Math.floor((tokenIds.length - 1) / this.blockSize);
    let parentSerial = ROOT_SERIAL;
    for (let i = 0; i < maxBlocks; i++) {
      const start = i * this.blockSize;
      const id = this.pool.lookup(parentSerial, tokenIds.slice(start, start + this.blockSize));
      if (id === undefined) break;
      hits.push(id);
      parentSerial = this.pool.serial(id);
    }
    // the window group must still hold the blocks the next token sees: else a shorter hit
    while (hits.length > 0 && this.windowHits(tokenIds, hits) === null) hits.pop();
    return hits;
  }

  /**
   * Makes room for `numNewTokens` more positions after the request's computed ones (after
   * `cachedPrefix`, when given for a request that holds no blocks yet). Returns the newly
   * allocated block ids, or null, changing nothing, when the pool cannot supply them.
   */
  allocateSlots(request: KvRequestView, numNewTokens: number, cachedPrefix: readonly number[] = []): number[] | null {
    let entry = this.tables.get(request.requestId);
    if (cachedPrefix.length > 0 && (entry?.blockIds.length ?? 0) > 0) {
      throw new Error(`allocateSlots(${request.requestId}): a cached prefix is only for an empty table`);
    }
    const numHeld = (entry?.blockIds.length ?? 0) + cachedPrefix.length;
    // a request without blocks has nothing computed but what the cache supplies
    const numComputed = (entry?.blockIds.length ?? 0) === 0 ? cachedPrefix.length * this.blockSize : request.numComputedTokens;
    const numNeeded = Math.ceil((numComputed + numNewTokens) / this.blockSize) - numHeld;
    // cache hits nobody references are counted as available, but touching them takes them out
    const revived = (pool: BlockPool, ids: readonly number[]): number => ids.filter((id) => pool.refCount(id) === 0).length;
    if (numNeeded > this.pool.numAvailable - revived(this.pool, cachedPrefix)) return null;
    // every new logical block is seen by this step's own tokens: the window group needs each too
    const windowPool = this.windowGroup?.pool;
    const windowPrefix = cachedPrefix.length > 0 ? this.windowHits(request.tokenIds, cachedPrefix) : [];
    if (windowPrefix === null) throw new Error(`allocateSlots(${request.requestId}): a cached prefix whose window blocks are gone`);
    if (windowPool && numNeeded > windowPool.numAvailable - revived(windowPool, windowPrefix)) return null;

    if (!entry) {
      entry = { blockIds: [], chainSerials: [], windowIds: [], windowStart: 0 };
      this.tables.set(request.requestId, entry);
    }
    if (cachedPrefix.length > 0) {
      this.pool.touch(cachedPrefix);
      for (const id of cachedPrefix) {
        entry.blockIds.push(id);
        entry.chainSerials.push(this.pool.serial(id));
      }
      if (windowPool) {
        windowPool.touch(windowPrefix);
        entry.windowStart = cachedPrefix.length - windowPrefix.length;
        entry.windowIds.push(...new Array<number>(entry.windowStart).fill(0), ...windowPrefix);
      }
    }
    const newIds = numNeeded > 0 ? this.pool.allocate(numNeeded) : [];
    for (const id of newIds) entry.blockIds.push(id);
    if (windowPool && numNeeded > 0) entry.windowIds.push(...windowPool.allocate(numNeeded));
    return newIds;
  }

  /**
   * After a step: registers the request's newly completed full blocks in the prefix cache (the
   * window group's too, under the same prefix), then gives back the window blocks no later query
   * can see (numComputedTokens never goes back while the request runs, so none is needed again).
   */
  cacheComputedBlocks(request: KvRequestView): void {
    const entry = this.tables.get(request.requestId);
    if (!entry) return;
    const numFull = this.enablePrefixCaching ? Math.min(Math.floor(request.numComputedTokens / this.blockSize), entry.blockIds.length) : 0;
    for (let i = entry.chainSerials.length; i < numFull; i++) {
      const parentSerial = i === 0 ? ROOT_SERIAL : entry.chainSerials[i - 1];
      const start = i * this.blockSize;
      const tokens = request.tokenIds.slice(start, start + this.blockSize);
      entry.chainSerials.push(this.pool.cacheBlock(entry.blockIds[i], parentSerial, tokens));
      const windowId = entry.windowIds[i];
      if (this.windowGroup && windowId) this.windowGroup.pool.cacheBlock(windowId, parentSerial, tokens);
    }
    const windowEnd = Math.min(this.firstWindowBlock(request.numComputedTokens), entry.windowIds.length);
    for (; entry.windowStart < windowEnd; entry.windowStart++) {
      const id = entry.windowIds[entry.windowStart]!;
      if (id) this.windowGroup!.pool.release([id]);
      entry.windowIds[entry.windowStart] = 0;
    }
  }

  /**
   * After a verify step rejected drafts: gives back the tail blocks that held only rejected
   * positions (at or past the request's known tokens), the one exception to append-only tables.
   * Such blocks were written this step by this request alone and lie past every computed full
   * block, so they are neither shared nor cached (checked: that would be a bookkeeping bug).
   */
  releaseRejectedSlots(request: KvRequestView): void {
    const entry = this.tables.get(request.requestId);
    if (!entry) return;
    const numKept = Math.max(Math.ceil(request.tokenIds.length / this.blockSize), entry.chainSerials.length);
    if (entry.blockIds.length <= numKept) return;
    const check = (pool: BlockPool, ids: number[]): number[] => {
      for (const id of ids) if (pool.refCount(id) !== 1 || pool.isCached(id)) throw new Error(`block ${id} of a rejected draft is shared or cached`);
      return ids;
    };
    this.pool.release(check(this.pool, entry.blockIds.splice(numKept).reverse()));
    if (this.windowGroup) this.windowGroup.pool.release(check(this.windowGroup.pool, entry.windowIds.splice(numKept).reverse()));
  }

  /** Releases every block of the request (tail first, so heads stay cached longest). */
  free(requestId: string): void {
    const entry = this.tables.get(requestId);
    if (!entry) return;
    this.tables.delete(requestId);
    this.pool.release(entry.blockIds.slice().reverse());
    this.windowGroup?.pool.release(entry.windowIds.filter((id) => id !== 0).reverse());
  }

  blockTable(requestId: string): readonly number[] {
    return this.tables.get(requestId)?.blockIds ?? [];
  }

  /** The window group's table (as long as blockTable, 0 before the window); empty without a group. */
  windowBlockTable(requestId: string): readonly number[] {
    return this.tables.get(requestId)?.windowIds ?? [];
  }

  /** Requests currently holding a table. */
  get numTables(): number {
    return this.tables.size;
  }
}
