// KVCacheManager: each request's append-only block table, slot allocation, and prefix reuse of
// full cached blocks. It decides nothing about which request runs; allocateSlots() just says no.
import { BlockPool, ROOT_SERIAL } from './block-pool';

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
}

export class KVCacheManager {
  readonly pool: BlockPool;
  readonly blockSize: number;
  readonly enablePrefixCaching: boolean;
  private readonly tables = new Map<string, RequestBlocks>();

  constructor(pool: BlockPool, options: { enablePrefixCaching?: boolean } = {}) {
    this.pool = pool;
    this.blockSize = pool.blockSize;
    this.enablePrefixCaching = options.enablePrefixCaching ?? true;
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
    let numRevived = 0;
    for (const id of cachedPrefix) if (this.pool.refCount(id) === 0) numRevived++;
    if (numNeeded > this.pool.numAvailable - numRevived) return null;

    if (!entry) {
      entry = { blockIds: [], chainSerials: [] };
      this.tables.set(request.requestId, entry);
    }
    if (cachedPrefix.length > 0) {
      this.pool.touch(cachedPrefix);
      for (const id of cachedPrefix) {
        entry.blockIds.push(id);
        entry.chainSerials.push(this.pool.serial(id));
      }
    }
    const newIds = numNeeded > 0 ? this.pool.allocate(numNeeded) : [];
    for (const id of newIds) entry.blockIds.push(id);
    return newIds;
  }

  /** Registers the request's newly completed full blocks in the prefix cache. */
  cacheComputedBlocks(request: KvRequestView): void {
    if (!this.enablePrefixCaching) return;
    const entry = this.tables.get(request.requestId);
    if (!entry) return;
    const numFull = Math.min(Math.floor(request.numComputedTokens / this.blockSize), entry.blockIds.length);
    for (let i = entry.chainSerials.length; i < numFull; i++) {
      const parentSerial = i === 0 ? ROOT_SERIAL : entry.chainSerials[i - 1];
      const start = i * this.blockSize;
      const tokens = request.tokenIds.slice(start, start + this.blockSize);
      entry.chainSerials.push(this.pool.cacheBlock(entry.blockIds[i], parentSerial, tokens));
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
    const rejected = entry.blockIds.splice(numKept).reverse();
    for (const id of rejected) {
      if (this.pool.refCount(id) !== 1 || this.pool.isCached(id)) throw new Error(`block ${id} of a rejected draft is shared or cached`);
    }
    this.pool.release(rejected);
  }

  /** Releases every block of the request (tail first, so heads stay cached longest). */
  free(requestId: string): void {
    const entry = this.tables.get(requestId);
    if (!entry) return;
    this.tables.delete(requestId);
    this.pool.release(entry.blockIds.slice().reverse());
  }

  blockTable(requestId: string): readonly number[] {
    return this.tables.get(requestId)?.blockIds ?? [];
  }

  /** Requests currently holding a table. */
  get numTables(): number {
    return this.tables.size;
  }
}
