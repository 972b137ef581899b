// Paged KV storage of the CPU runner: per layer one K and one V array of fixed-size blocks, holding
// the values its KvCacheType stores (rounded at the write, kvWrite; kept decoded in f32, which is
// exact). Not the allocator: which block belongs to whom is the engine's block pool's business.
import type { KvCacheType } from '../engine/kv-types';

export interface KvPoolShape {
  numLayers: number;
  numBlocks: number;
  blockSize: number;
  numKvHeads: number;
  headDim: number;
  kvCacheType: KvCacheType;
  /**
   * The sliding-window layers' own blocks (the runner's windowGroup): those layers' K/V arrays
   * hold numWindowBlocks blocks, read and written through rows' windowBlockTable. Absent: every
   * layer holds numBlocks.
   */
  windowGroup?: { numBlocks: number; window: number; layers: readonly boolean[] };
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
  /** Positions a window-group layer keeps (0: no window group). */
  readonly window: number;
  /** Blocks of each window-group layer, block 0 included (0: no window group). */
  readonly numWindowBlocks: number;
  /** [numLayers] whether a layer lives in the window group's blocks. */
  readonly layerWindowed: readonly boolean[];
  /** [numLayers] of [numBlocks (numWindowBlocks in the window group), blockSize, numKvHeads, headDim]; block 0 is reserved. */
  readonly k: Float32Array[];
  /** [numLayers] of [numBlocks (numWindowBlocks in the window group), blockSize, numKvHeads, headDim]; block 0 is reserved. */
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
    const group = shape.windowGroup;
    if (group && (group.numBlocks < 2 || group.layers.length !== shape.numLayers)) throw new RangeError('a window group needs block 0 plus a block, and a flag per layer');
    this.window = group?.window ?? 0;
    this.numWindowBlocks = group?.numBlocks ?? 0;
    this.layerWindowed = group ? [...group.layers] : new Array<boolean>(shape.numLayers).fill(false);
    const floatsPerLayer = (l: number): number => (this.layerWindowed[l] ? this.numWindowBlocks : shape.numBlocks) * shape.blockSize * this.kvDim;
    this.k = Array.from({ length: shape.numLayers }, (_, l) => new Float32Array(floatsPerLayer(l)));
    this.v = Array.from({ length: shape.numLayers }, (_, l) => new Float32Array(floatsPerLayer(l)));
  }

  /** Floats one block holds in one layer's K (or V): [blockSize, numKvHeads, headDim]. */
  get floatsPerBlock(): number {
    return this.blockSize * this.kvDim;
  }

  /** Throws unless id names a usable block of a pool of `numBlocks` (block 0 is reserved and never read or written). */
  checkBlock(id: number, numBlocks = this.numBlocks): void {
    if (!Number.isInteger(id) || id < 1 || id >= numBlocks) {
      throw new RangeError(`KV block ${id} is outside 1..${numBlocks - 1}`);
    }
  }
}
