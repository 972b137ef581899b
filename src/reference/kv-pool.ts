// Paged KV storage of the CPU runner: per layer one K and one V array of fixed-size blocks, holding
// the values its KvCacheType stores (rounded at the write, kvWrite; kept decoded in f32, which is
// exact). Not the allocator: which block belongs to whom is the engine's block pool's business.
import type { KvCacheType } from '../engine/kv-types';
import type { KvCacheGroupSpec } from '../engine/types';

export interface KvPoolShape {
  numLayers: number;
  blockSize: number;
  numKvHeads: number;
  headDim: number;
  kvCacheType: KvCacheType;
  /** The runner's KV cache groups (ModelRunner.kvGroups): a layer's K/V hold its group's numBlocks blocks. */
  groups: readonly KvCacheGroupSpec[];
  /** [numLayers] the group each layer lives in, read and written through rows' blockTables[group]; absent: every layer in group 0. */
  layerGroup?: readonly number[];
}

export class KvPool {
  readonly numLayers: number;
  readonly blockSize: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** What kvWrite rounds every K and V value to. */
  readonly kvCacheType: KvCacheType;
  /** numKvHeads * headDim: floats per token slot. */
  readonly kvDim: number;
  readonly groups: readonly KvCacheGroupSpec[];
  /** [numLayers] the KV cache group layer l lives in. */
  readonly layerGroup: readonly number[];
  /** [numLayers] of [its group's numBlocks, blockSize, numKvHeads, headDim]; block 0 is reserved. */
  readonly k: Float32Array[];
  /** [numLayers] of [its group's numBlocks, blockSize, numKvHeads, headDim]; block 0 is reserved. */
  readonly v: Float32Array[];

  constructor(shape: KvPoolShape) {
    if (shape.groups.length === 0 || shape.groups.some((g) => g.numBlocks < 2)) throw new RangeError('every KV cache group needs block 0 (reserved) plus at least one block');
    const layerGroup = shape.layerGroup ?? new Array<number>(shape.numLayers).fill(0);
    if (layerGroup.length !== shape.numLayers || layerGroup.some((g) => !(g >= 0 && g < shape.groups.length))) throw new RangeError('a KV cache group per layer, among the groups');
    this.numLayers = shape.numLayers;
    this.blockSize = shape.blockSize;
    this.numKvHeads = shape.numKvHeads;
    this.headDim = shape.headDim;
    this.kvCacheType = shape.kvCacheType;
    this.kvDim = shape.numKvHeads * shape.headDim;
    this.groups = shape.groups;
    this.layerGroup = [...layerGroup];
    const floatsPerLayer = (l: number): number => shape.groups[layerGroup[l]!]!.numBlocks * shape.blockSize * this.kvDim;
    this.k = Array.from({ length: shape.numLayers }, (_, l) => new Float32Array(floatsPerLayer(l)));
    this.v = Array.from({ length: shape.numLayers }, (_, l) => new Float32Array(floatsPerLayer(l)));
  }

  /** Floats one block holds in one layer's K (or V): [blockSize, numKvHeads, headDim]. */
  get floatsPerBlock(): number {
    return this.blockSize * this.kvDim;
  }

  /** Throws unless id names a usable block of group g's pool (block 0 is reserved and never read or written). */
  checkBlock(id: number, g = 0): void {
    const numBlocks = this.groups[g]!.numBlocks;
    if (!Number.isInteger(id) || id < 1 || id >= numBlocks) {
      throw new RangeError(`KV block ${id} is outside 1..${numBlocks - 1}`);
    }
  }
}
