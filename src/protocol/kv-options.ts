// The KV cache options of a model load (storage type and pool size) and the one check of them that
// the library, the worker's host and the page share, plus how many sessions a pool holds. Pure.
import { DEFAULT_KV_CACHE_TYPE, isKvCacheType, KV_CACHE_TYPES, kvBytesPerToken, kvCacheTypeProblem, type KvCacheShape, type KvCacheType } from '../engine/kv-types';

export { DEFAULT_KV_CACHE_TYPE, KV_CACHE_TYPES, kvBytesPerToken, type KvCacheShape, type KvCacheType };

/** What a load may ask of the KV pool. Both optional: f16, and a pool sized from the device. */
export interface KvCacheOptions {
  /** How K and V are stored: 'f32', 'f16' (default) or 'q8_0' (needs numKvHeads * headDim a multiple of 32). */
  kvCacheType?: KvCacheType;
  /** Bytes the KV pool may take (default: from what the device offers, less weights and activations). */
  kvCacheBytes?: number;
}

/** A bad KV option: which one (the library's InvalidRequestError param) and why, the message starting with its name. */
export interface KvOptionProblem {
  param: 'kvCacheType' | 'kvCacheBytes';
  message: string;
}

/** Token positions per KV block in both runners unless told otherwise: what a pool's least size is counted in. */
export const DEFAULT_KV_BLOCK_SIZE = 16;

/** Whether the options have the right shape, before any model is known; null when they do. */
export function kvOptionsShapeProblem(options: unknown): KvOptionProblem | null {
  if (options === undefined || options === null) return null;
  if (typeof options !== 'object') return { param: 'kvCacheType', message: `kvCacheType: load options must be an object, not ${typeof options}` };
  const { kvCacheType, kvCacheBytes } = options as Record<string, unknown>;
  if (kvCacheType !== undefined && !isKvCacheType(kvCacheType)) {
    return { param: 'kvCacheType', message: `kvCacheType: ${JSON.stringify(kvCacheType)} is not one of ${KV_CACHE_TYPES.join(', ')}` };
  }
  if (kvCacheBytes !== undefined && (typeof kvCacheBytes !== 'number' || !Number.isSafeInteger(kvCacheBytes) || kvCacheBytes <= 0)) {
    return { param: 'kvCacheBytes', message: `kvCacheBytes: ${String(kvCacheBytes)} is not a positive whole number of bytes` };
  }
  return null;
}

/**
 * Whether the options fit this model: its K/V rows can be stored in the type (q8_0 needs whole
 * blocks of 32 values per token), and the pool buys at least 2 blocks (block 0 is reserved).
 */
export function kvOptionsModelProblem(options: KvCacheOptions, shape: KvCacheShape, blockSize = DEFAULT_KV_BLOCK_SIZE): KvOptionProblem | null {
  const type = options.kvCacheType ?? DEFAULT_KV_CACHE_TYPE;
  const typeProblem = kvCacheTypeProblem(type, shape.numKvHeads * shape.headDim);
  if (typeProblem) return { param: 'kvCacheType', message: `kvCacheType: ${typeProblem}` };
  if (options.kvCacheBytes !== undefined) {
    const blockBytes = blockSize * kvBytesPerToken(shape, type);
    if (options.kvCacheBytes < 2 * blockBytes) {
      return { param: 'kvCacheBytes', message: `kvCacheBytes: ${options.kvCacheBytes} bytes buy ${Math.floor(options.kvCacheBytes / blockBytes)} ${type} KV blocks of ${blockBytes} bytes on this model; at least 2 are needed (block 0 is reserved), i.e. ${2 * blockBytes} bytes` };
    }
  }
  return null;
}

/** Sessions of `tokens` positions each that a pool of `numBlocks` blocks (block 0 reserved) holds at once, no prefix shared. */
export function sessionsThatFit(numBlocks: number, blockSize: number, tokens: number): number {
  if (blockSize <= 0 || numBlocks < 2) return 0;
  return Math.floor((numBlocks - 1) / Math.ceil(tokens / blockSize));
}
