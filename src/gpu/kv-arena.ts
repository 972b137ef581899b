// The paged KV pool on the GPU: per layer, K [numBlocks, blockSize, kvDim] then V of the same
// shape in the pool's KvCacheType (f32, f16 or q8_0, see kvLayerLayout); whole layers packed into
// as few buffers as the device allows. Not an allocator: the engine's block pool decides which
// block belongs to whom (block 0 is reserved).
import { kvValueBytes, type KvCacheType } from '../engine/kv-types';

export interface KvShape {
  numLayers: number;
  blockSize: number;
  /** numKvHeads * headDim: floats per token slot */
  kvDim: number;
  kvCacheType: KvCacheType;
}

export interface KvArenaLimits {
  maxStorageBufferBindingSize: number;
  maxBufferSize: number;
  minStorageBufferOffsetAlignment: number;
}

export interface KvArenaPlan {
  numBlocks: number;
  /** Bytes of one layer's K + V region */
  layerBytes: number;
  /** Bytes between consecutive layers in a buffer (layerBytes aligned for binding offsets) */
  layerStride: number;
  layersPerBuffer: number;
  numBuffers: number;
}

/**
 * Sizes the pool: as many blocks as `budgetBytes` pays for (capped by `maxBlocks`), no more than
 * one layer's binding can address, packed so no buffer exceeds maxBufferSize.
 */
export function planKvArena(shape: KvShape, limits: KvArenaLimits, budgetBytes: number, maxBlocks = Infinity): KvArenaPlan {
  const blockLayerBytes = 2 * shape.blockSize * kvValueBytes(shape.kvCacheType, shape.kvDim); // K + V of one block in one layer
  const maxBinding = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const byBudget = Math.floor(budgetBytes / (blockLayerBytes * shape.numLayers));
  const byBinding = Math.floor(maxBinding / blockLayerBytes);
  const numBlocks = Math.min(maxBlocks, byBudget, byBinding);
  if (numBlocks < 2) {
    throw new Error(`KV pool: ${budgetBytes} bytes buy ${numBlocks} blocks of ${blockLayerBytes * shape.numLayers} bytes; at least 2 are needed (block 0 is reserved)`);
  }
  const layerBytes = numBlocks * blockLayerBytes;
  const align = limits.minStorageBufferOffsetAlignment;
  const layerStride = Math.ceil(layerBytes / align) * align;
  const layersPerBuffer = Math.max(1, Math.min(shape.numLayers, Math.floor((limits.maxBufferSize - layerBytes) / layerStride) + 1));
  return { numBlocks, layerBytes, layerStride, layersPerBuffer, numBuffers: Math.ceil(shape.numLayers / layersPerBuffer) };
}

/**
 * A runner's arenas: one per KV cache group (kv-groups.ts planKvGroups; ModelRunner.kvGroups in
 * the same order), each holding its layers, and which group each layer lives in.
 */
export interface KvArenas {
  /** [kvGroups] each group's arena: the first keeps every position (the global layers, or all). */
  arenas: readonly KvArena[];
  /** [numLayers] the group (index into arenas) layer l lives in */
  layerGroup: readonly number[];
}

/** Layer l's group, that group's arena and the layer's binding there (its index among the arena's layers). */
export function layerKv(kv: KvArenas, l: number): { group: number; arena: KvArena; binding: { buffer: GPUBuffer; offset: number; size: number } } {
  const group = kv.layerGroup[l]!;
  const arena = kv.arenas[group]!;
  const index = kv.layerGroup.slice(0, l).filter((g) => g === group).length;
  return { group, arena, binding: arena.layerBinding(index) };
}

export class KvArena {
  readonly buffers: GPUBuffer[];

  constructor(
    device: GPUDevice,
    readonly shape: KvShape,
    readonly plan: KvArenaPlan,
    /** Its buffers' label prefix ('kv': `kv-0`, ...; a second group's 'kv-g1'). */
    label = 'kv',
  ) {
    this.buffers = [];
    for (let b = 0; b < plan.numBuffers; b++) {
      const numLayers = Math.min(plan.layersPerBuffer, shape.numLayers - b * plan.layersPerBuffer);
      this.buffers.push(
        device.createBuffer({
          label: `${label}-${b}`,
          size: (numLayers - 1) * plan.layerStride + plan.layerBytes,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        }),
      );
    }
  }

  get numBlocks(): number {
    return this.plan.numBlocks;
  }

  /** u32 words from a layer's K region to its V region (the kernels' vOffset). */
  get vOffsetWords(): number {
    return kvLayerLayout(this.shape.kvCacheType, this.plan.numBlocks * this.shape.blockSize, this.shape.kvDim).vOffsetWords;
  }

  /** The binding of one layer's K + V region. */
  layerBinding(layer: number): { buffer: GPUBuffer; offset: number; size: number } {
    const b = Math.floor(layer / this.plan.layersPerBuffer);
    return { buffer: this.buffers[b]!, offset: (layer - b * this.plan.layersPerBuffer) * this.plan.layerStride, size: this.plan.layerBytes };
  }

  destroy(): void {
    for (const buffer of this.buffers) buffer.destroy();
  }
}

/** Values one u32 word of a K or V region holds: f32 1, f16 2 (pack2x16float), q8_0 4 quants. */
export const KV_VALUES_PER_WORD: Record<KvCacheType, number> = { f32: 1, f16: 2, q8_0: 4 };

/**
 * One layer's regions in u32 words, for numSlots token slots of kvDim values: K at word 0, V at
 * vOffsetWords, both [numSlots, kvDim / KV_VALUES_PER_WORD]. q8_0 then has its scales at
 * 2 * vOffsetWords: [numSlots, kvDim / 32] words, each the K block's d (low half) and the V
 * block's d (high half) as f16, so one writer owns every word and there is no padding: a slot
 * costs 2 * 34 bytes per 32 values, as llama.cpp's blocks.
 */
export function kvLayerLayout(type: KvCacheType, numSlots: number, kvDim: number): { vOffsetWords: number; scalesOffsetWords: number; words: number } {
  const vOffsetWords = (numSlots * kvDim) / KV_VALUES_PER_WORD[type];
  // K + V of every slot at kvValueBytes each: for q8_0 the words past 2 * vOffsetWords are the scales
  const words = (numSlots * 2 * kvValueBytes(type, kvDim)) / 4;
  return { vOffsetWords, scalesOffsetWords: 2 * vOffsetWords, words };
}
