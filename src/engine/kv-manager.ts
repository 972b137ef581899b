// KVCacheManager: each request's append-only block tables, one per KV cache group, slot
// allocation, and prefix reuse of full cached blocks; each group's kind says which blocks a step
// may give back. It decides nothing about which request runs; allocateSlots() just says no.
import { BlockPool, ROOT_SERIAL } from './block-pool';
import { firstReadBlock } from './types';

/**
 * One KV cache group as the manager keeps it (vLLM's KVCacheGroupSpec with its single-type
 * manager): the pool holding its layers' blocks and its kind. Every group's table covers the same
 * logical blocks. `window` null is full attention: no block goes back while the request runs. A
 * number is a sliding window (gemma's local layers, llama.cpp's SWA cache): a block every later
 * query starts past (firstReadBlock) goes back, so a request holds about window / blockSize of
 * them whatever its length. The first group must keep every position: its serials name prefixes.
 */
export interface KvGroup {
  readonly pool: BlockPool;
  /** Positions each query sees (itself included), the largest of the group's layers; null: all. */
  readonly window: number | null;
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
  /**
   * [group] block table: position p lives in tables[g][floor(p / blockSize)]. Every table is as
   * long as the first and only ever appended to; an entry of a sliding-window group turns 0
   * (block 0, never read) once before its window, and stays 0.
   */
  tables: number[][];
  /** [group] entries before this logical block are 0 (given back). */
  firstHeld: number[];
  /** [numCachedBlocks] cache serial of the first group's canonical cached block for each prefix block. */
  chainSerials: number[];
}

export class KVCacheManager {
  readonly groups: readonly KvGroup[];
  /** The first group's pool: the one that bounds a request and names cached prefixes. */
  readonly pool: BlockPool;
  readonly blockSize: number;
  readonly enablePrefixCaching: boolean;
  private readonly tables = new Map<string, RequestBlocks>();

  constructor(groups: readonly KvGroup[], options: { enablePrefixCaching?: boolean } = {}) {
    if (groups.length === 0 || groups[0]!.window !== null) throw new RangeError('the first KV cache group must keep every position (full attention)');
    this.groups = groups;
    this.pool = groups[0]!.pool;
    this.blockSize = this.pool.blockSize;
    this.enablePrefixCaching = options.enablePrefixCaching ?? true;
    for (const group of groups) {
      if (group.pool.blockSize !== this.blockSize || !(group.window === null || group.window >= 1)) {
        throw new RangeError(`every KV cache group needs blocks of ${this.blockSize} positions and a window >= 1 or none`);
      }
    }
  }

  /**
   * Group g's cached blocks a request reusing the first group's `hits` needs (logical blocks from
   * the first its next token reads up to the hits' end), or null when one is no longer cached.
   * Keyed by the first group's serials, which name a prefix exactly.
   */
  private groupHits(g: number, tokenIds: readonly number[], hits: readonly number[]): number[] | null {
    if (g === 0) return [...hits];
    const group = this.groups[g]!;
    const ids: number[] = [];
    for (let i = firstReadBlock(group.window, this.blockSize, hits.length * this.blockSize); i < hits.length; i++) {
      const parentSerial = i === 0 ? ROOT_SERIAL : this.pool.serial(hits[i - 1]!);
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
    // every other group must still hold the blocks the next token reads: else a shorter hit
    while (hits.length > 0 && this.groups.some((_, g) => this.groupHits(g, tokenIds, hits) === null)) hits.pop();
    return hits;
  }

  /**
   * Makes room for `numNewTokens` more positions after the request's computed ones (after
   * `cachedPrefix`, when given for a request that holds no blocks yet). Returns the first group's
   * newly allocated block ids, or null, changing nothing, when some group's pool cannot supply them.
   */
  allocateSlots(request: KvRequestView, numNewTokens: number, cachedPrefix: readonly number[] = []): number[] | null {
    let entry = this.tables.get(request.requestId);
    const numHeldBefore = entry?.tables[0]!.length ?? 0;
    if (cachedPrefix.length > 0 && numHeldBefore > 0) {
      throw new Error(`allocateSlots(${request.requestId}): a cached prefix is only for an empty table`);
    }
    const numHeld = numHeldBefore + cachedPrefix.length;
    // a request without blocks has nothing computed but what the cache supplies
    const numComputed = numHeldBefore === 0 ? cachedPrefix.length * this.blockSize : request.numComputedTokens;
    const numNeeded = Math.ceil((numComputed + numNewTokens) / this.blockSize) - numHeld;
    // every new logical block is seen by this step's own tokens: each group needs each of them
    const prefixes = this.groups.map((_, g) => (cachedPrefix.length > 0 ? this.groupHits(g, request.tokenIds, cachedPrefix) : []));
    if (prefixes.some((ids) => ids === null)) throw new Error(`allocateSlots(${request.requestId}): a cached prefix whose blocks in another group are gone`);
    // cache hits nobody references are counted as available, but touching them takes them out
    const fits = this.groups.every(({ pool }, g) => numNeeded <= pool.numAvailable - prefixes[g]!.filter((id) => pool.refCount(id) === 0).length);
    if (!fits) return null;

    if (!entry) {
      entry = { tables: this.groups.map(() => []), firstHeld: this.groups.map(() => 0), chainSerials: [] };
      this.tables.set(request.requestId, entry);
    }
    const held = entry;
    const newIds: number[] = [];
    this.groups.forEach(({ pool }, g) => {
      const table = held.tables[g]!;
      const prefix = prefixes[g]!;
      if (cachedPrefix.length > 0) {
        pool.touch(prefix);
        held.firstHeld[g] = cachedPrefix.length - prefix.length;
        table.push(...new Array<number>(held.firstHeld[g]!).fill(0), ...prefix);
      }
      const ids = numNeeded > 0 ? pool.allocate(numNeeded) : [];
      table.push(...ids);
      if (g === 0) newIds.push(...ids);
    });
    if (cachedPrefix.length > 0) for (const id of cachedPrefix) held.chainSerials.push(this.pool.serial(id));
    return newIds;
  }

  /**
   * After a step: registers the request's newly completed full blocks in the prefix cache (every
   * group's under the first group's prefix), then gives back each group's blocks no later query
   * reads (numComputedTokens never goes back while the request runs, so none is needed again).
   */
  cacheComputedBlocks(request: KvRequestView): void {
    const entry = this.tables.get(request.requestId);
    if (!entry) return;
    const numFull = this.enablePrefixCaching ? Math.min(Math.floor(request.numComputedTokens / this.blockSize), entry.tables[0]!.length) : 0;
    for (let i = entry.chainSerials.length; i < numFull; i++) {
      const parentSerial = i === 0 ? ROOT_SERIAL : entry.chainSerials[i - 1]!;
      const start = i * this.blockSize;
      const tokens = request.tokenIds.slice(start, start + this.blockSize);
      entry.chainSerials.push(this.pool.cacheBlock(entry.tables[0]![i]!, parentSerial, tokens));
      for (let g = 1; g < this.groups.length; g++) {
        const id = entry.tables[g]![i]!;
        if (id) this.groups[g]!.pool.cacheBlock(id, parentSerial, tokens);
      }
    }
    this.groups.forEach(({ pool, window }, g) => {
      const table = entry.tables[g]!;
      const end = Math.min(firstReadBlock(window, this.blockSize, request.numComputedTokens), table.length);
      for (; entry.firstHeld[g]! < end; entry.firstHeld[g]!++) {
        const id = table[entry.firstHeld[g]!]!;
        if (id) pool.release([id]);
        table[entry.firstHeld[g]!] = 0;
      }
    });
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
    if (entry.tables[0]!.length <= numKept) return;
    this.groups.forEach(({ pool }, g) => {
      const ids = entry.tables[g]!.splice(numKept).reverse();
      for (const id of ids) if (pool.refCount(id) !== 1 || pool.isCached(id)) throw new Error(`block ${id} of a rejected draft is shared or cached`);
      pool.release(ids);
    });
  }

  /** Releases every block of the request (tail first, so heads stay cached longest). */
  free(requestId: string): void {
    const entry = this.tables.get(requestId);
    if (!entry) return;
    this.tables.delete(requestId);
    this.groups.forEach(({ pool }, g) => pool.release(entry.tables[g]!.filter((id) => id !== 0).reverse()));
  }

  /** Group g's block table of the request (the first group's by default); empty when it holds none. */
  blockTable(requestId: string, g = 0): readonly number[] {
    return this.tables.get(requestId)?.tables[g] ?? [];
  }

  /** Every group's block table of the request, in group order (what a plan row carries). */
  blockTables(requestId: string): Int32Array[] {
    return this.groups.map((_, g) => Int32Array.from(this.blockTable(requestId, g)));
  }

  /** Requests currently holding a table. */
  get numTables(): number {
    return this.tables.size;
  }
}
