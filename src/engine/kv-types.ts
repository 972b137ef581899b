// The KV cache's storage types and what one token costs in each: the one definition the runners,
// the pool sizing, the model card and the capacity benchmark read. Not a kernel and not an allocator.

/**
 * How K and V values are stored. f16: IEEE half, rounded once at the write. q8_0: llama.cpp's
 * block layout, 32 values sharing one f16 scale (d = max|x| / 127, q = round(x / d)), 34 bytes.
 */
export type KvCacheType = 'f32' | 'f16' | 'q8_0';

export const KV_CACHE_TYPES: readonly KvCacheType[] = ['f32', 'f16', 'q8_0'];

/** As llama.cpp's default (--cache-type-k/-v f16) and WebLLM's f16 models. */
export const DEFAULT_KV_CACHE_TYPE: KvCacheType = 'f16';

/** Values per q8_0 block (llama.cpp's QK8_0). */
export const Q8_0_BLOCK_VALUES = 32;

export function isKvCacheType(value: unknown): value is KvCacheType {
  return typeof value === 'string' && (KV_CACHE_TYPES as readonly string[]).includes(value);
}

/** Why `type` cannot store rows of `kvDim` values, or null when it can. */
export function kvCacheTypeProblem(type: KvCacheType, kvDim: number): string | null {
  if (type === 'q8_0' && kvDim % Q8_0_BLOCK_VALUES !== 0) {
    return `q8_0 KV needs numKvHeads * headDim to be a multiple of ${Q8_0_BLOCK_VALUES}; this model has ${kvDim}`;
  }
  if (type === 'f16' && kvDim % 2 !== 0) return `f16 KV packs values in pairs; numKvHeads * headDim is ${kvDim}`;
  return null;
}

/** Bytes that `numValues` values take in `type` (numValues a whole number of q8_0 blocks for q8_0). */
export function kvValueBytes(type: KvCacheType, numValues: number): number {
  switch (type) {
    case 'f32':
      return 4 * numValues;
    case 'f16':
      return 2 * numValues;
    case 'q8_0':
      return (numValues / Q8_0_BLOCK_VALUES) * (Q8_0_BLOCK_VALUES + 2);
  }
}

export interface KvCacheShape {
  numLayers: number;
  numKvHeads: number;
  headDim: number;
}

/** K + V bytes of one token position over every layer: what llama.cpp reports per cell. */
export function kvBytesPerToken(shape: KvCacheShape, type: KvCacheType): number {
  return 2 * shape.numLayers * kvValueBytes(type, shape.numKvHeads * shape.headDim);
}
