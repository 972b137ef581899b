// The KV cache's storage rounding on the CPU: a row of f32 K or V values -> the f32 values its
// KvCacheType stores (f16, q8_0 dequantized), the twin of rope_kv_write.wgsl's write. Not a
// byte encoder: the reference pool keeps the decoded values, which are exact in f32.
import { f16ToF32, f32ToF16 } from '../model/half';
import { Q8_0_BLOCK_VALUES, type KvCacheType } from '../engine/kv-types';

const fround = Math.fround;

/** C's roundf: halves away from zero (exact in f64 for the f32 inputs it gets); an int8 has no -0. */
function roundHalfAway(x: number): number {
  return Math.sign(x) * Math.floor(Math.abs(x) + 0.5) + 0;
}

/**
 * One q8_0 block of src at `at` into dst, as ggml's quantize_row_q8_0_ref then dequantize: d =
 * amax / 127 (f32), id = 1 / d from that unrounded d, q = roundf(x * id), stored q * f16(d).
 */
export function roundQ8_0Block(src: Float32Array, at: number, dst: Float32Array, dstAt: number): void {
  let amax = 0;
  for (let j = 0; j < Q8_0_BLOCK_VALUES; j++) amax = Math.max(amax, Math.abs(src[at + j]!));
  const d = fround(amax / 127);
  const id = d !== 0 ? fround(1 / d) : 0;
  const stored = f16ToF32(f32ToF16(d));
  for (let j = 0; j < Q8_0_BLOCK_VALUES; j++) dst[dstAt + j] = roundHalfAway(fround(src[at + j]! * id)) * stored;
}

/** n values of src from `at` into dst at dstAt as `type` stores them (n: whole q8_0 blocks for q8_0). */
export function roundKvValues(type: KvCacheType, src: Float32Array, at: number, n: number, dst: Float32Array, dstAt: number): void {
  switch (type) {
    case 'f32':
      dst.set(src.subarray(at, at + n), dstAt);
      return;
    case 'f16':
      for (let j = 0; j < n; j++) dst[dstAt + j] = f16ToF32(f32ToF16(src[at + j]!));
      return;
    case 'q8_0':
      for (let b = 0; b < n; b += Q8_0_BLOCK_VALUES) roundQ8_0Block(src, at + b, dst, dstAt + b);
      return;
  }
}
