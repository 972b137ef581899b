// The KV pool options a load takes (kvCacheType, kvCacheBytes) and the one check of them, shared by
// the library (before any worker call) and the host (whatever the page sends). Pure; no sizing here.
import { KV_CACHE_TYPES, type KvCacheType } from '../model/kv-types';

/** How a model's KV pool is built: loadModel's third argument, createEngine's and engine.load's options. */
export interface KvCacheOptions {
  /** How K and V are stored (default DEFAULT_KV_CACHE_TYPE, f16): f32 4 bytes a value, f16 2, q8_0 34 per 32. */
  kvCacheType?: KvCacheType;
  /** Bytes the KV pool may take (default: src/gpu/device.ts's rule from the adapter's limits); still capped by one binding per layer. */
  kvCacheBytes?: number;
}

/** Smallest kvCacheBytes accepted: below it no real model gets a single session's worth of blocks. */
export const MIN_KV_CACHE_BYTES = 2 ** 20;
/** Largest kvCacheBytes accepted (1 TiB): a figure past any device, so a typo is refused rather than tried. */
export const MAX_KV_CACHE_BYTES = 2 ** 40;

/** What is wrong with KV options given as plain data, or null: the option named, the value as it came, what it must be. */
export function checkKvCacheOptions(options: unknown): { param: 'kvCacheType' | 'kvCacheBytes'; value: unknown; expected: string } | null {
  if (options === null || typeof options !== 'object') return null;
  const { kvCacheType, kvCacheBytes } = options as Record<string, unknown>;
  if (kvCacheType !== undefined && !KV_CACHE_TYPES.includes(kvCacheType as KvCacheType)) {
    return { param: 'kvCacheType', value: kvCacheType, expected: `one of ${KV_CACHE_TYPES.map((t) => `'${t}'`).join(', ')}` };
  }
  if (kvCacheBytes !== undefined && (typeof kvCacheBytes !== 'number' || !Number.isInteger(kvCacheBytes) || kvCacheBytes < MIN_KV_CACHE_BYTES || kvCacheBytes > MAX_KV_CACHE_BYTES)) {
    return { param: 'kvCacheBytes', value: kvCacheBytes, expected: `an integer number of bytes from ${MIN_KV_CACHE_BYTES} (1 MiB) to ${MAX_KV_CACHE_BYTES} (1 TiB)` };
  }
  return null;
}

/** The message both sides give for a refused option: `<param> must be <expected>, got <value>`. */
export function kvCacheOptionMessage(problem: NonNullable<ReturnType<typeof checkKvCacheOptions>>): string {
  const shown = typeof problem.value === 'string' ? JSON.stringify(problem.value) : String(problem.value);
  return `${problem.param} must be ${problem.expected}, got ${shown}`;
}
