// Paged KV storage of the CPU runner: per layer one K and one V array of fixed-size blocks, holding
// the values its KvCacheType stores (rounded at the write, kvWrite; kept decoded in f32, which is
// exact). Not the allocator: which block belongs to whom is the engine's block pool's business.
import type { KvCacheType } from '../model/kv-types';

export interface KvPoolShape {
  numLayers: number;
  numBlocks: number;
  blockSize: number;
  numKvHeads: number;
  headDim: number;
  kvCacheType: KvCacheType;
}

export class KvPool {
  readonly numLayers: number;
  readonly numBlocks: number;
  readonly blockSize: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** What kvWrite rounds every K and V value to. */
  readonly kvCacheType: KvCacheType;
  /** numKvHeads * headDim: floats per token slot. */
  readonly kvDim: number;
  /** [numLayers] of [numBlocks, blockSize, numKvHeads, headDim]; block 0 is reserved. */
  readonly k: Float32Array[];
  /** [numLayers] of [numBlocks, blockSize, numKvHeads, headDim]; block 0 is reserved. */
  readonly v: Float32Array[];

  constructor(shape: KvPoolShape) {
    if (shape.numBlocks < 2) throw new RangeError('a KV pool needs block 0 (reserved) plus at least one block');
    this.numLayers = shape.numLayers;
    this.numBlocks = shape.numBlocks;
    this.blockSize = shape.blockSize;
    this.numKvHeads = shape.numKvHeads;
    this.headDim = shape.headDim;
    this.kvCacheType = shape.kvCacheType;
    this.kvDim = shape.numKvHeads * shape.headDim;
    const floatsPerLayer = shape.numBlocks * shape.blockSize * this.kvDim;
    this.k = Array.from({ length: shape.numLayers }, () => new Float32Array(floatsPerLayer));
    this.v = Array.from({ length: shape.numLayers }, () => new Float32Array(floatsPerLayer));
  }

  /** Floats one block holds in one layer's K (or V): [blockSize, numKvHeads, headDim]. */
  get floatsPerBlock(): number {
    return this.blockSize * this.kvDim;
  }

  /** Throws unless id names a usable block (block 0 is reserved and never read or written). */
  checkBlock(id: number): void {
    if (!Number.isInteger(id) || id < 1 || id >= this.numBlocks) {
      throw new RangeError(`KV block ${id} is outside 1..${this.numBlocks - 1}`);
    }
  }
}
