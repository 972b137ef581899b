// The KV cache's storage types and what one token costs in each: the one table the runners, the
// pool sizing, the page's model card and the capacity benchmark read. Not the kernels that use them.

/** f32 as computed; f16 two per u32 (pack2x16float); q8_0 in llama.cpp's blocks of 32 values. */
export type KvCacheType = 'f32' | 'f16' | 'q8_0';

export const KV_CACHE_TYPES: readonly KvCacheType[] = ['f32', 'f16', 'q8_0'];

/** llama.cpp's default (--cache-type-k/-v f16): half of f32's bytes, rounding once at the write. */
export const DEFAULT_KV_CACHE_TYPE: KvCacheType = 'f16';

/** Values per q8_0 block: one f16 scale, then 32 signed bytes (34 bytes), as in ggml. */
export const Q8_0_BLOCK_VALUES = 32;
const Q8_0_BLOCK_BYTES = 34;

/** Bytes of `numValues` K (or V) values of one token in one layer, stored as `type`. */
export function kvRowBytes(type: KvCacheType, numValues: number): number {
  if (type === 'f32') return 4 * numValues;
  if (type === 'f16') return 2 * numValues;
  if (numValues % Q8_0_BLOCK_VALUES !== 0) throw new Error(`q8_0 KV needs rows of a multiple of ${Q8_0_BLOCK_VALUES} values, not ${numValues}`);
  return (numValues / Q8_0_BLOCK_VALUES) * Q8_0_BLOCK_BYTES;
}

/** K and V of one token across every layer: what a session pays per position of its context. */
export function kvBytesPerToken(type: KvCacheType, numLayers: number, kvDim: number): number {
  return 2 * numLayers * kvRowBytes(type, kvDim);
}
