// What llama.cpp's CPU backend rounds around an f16 or q8_0 KV cache, for the oracle test: the
// write (ggml_set_rows: f16, or the AVX2 q8_0 quantizer) and attention's own roundings: Q to K's
// vec_dot_type (f16, or q8_0 blocks), and without flash attention (f16 V) the softmax weights to
// f16 for kq . V. Sums otherwise in the reference's order: bounds, not bits.
import { f16ToF32, f32ToF16 } from '../../model/half';
import type { KvCacheType } from '../../engine/kv-types';
import type { AttentionLayout } from '../ops';
import { roundQ8_0 } from './rounding';

const roundF16 = (x: number): number => f16ToF32(f32ToF16(x));

/**
 * n values of src from `at` as llama.cpp stores or converts them to `type` into dst at the same
 * offset. q8_0 blocks follow the row's own element order: for llama GGUFs (q/k rows permuted)
 * they match llama.cpp's only when a head is one block (headDim 32).
 */
function roundLikeLlamaCpp(type: KvCacheType, src: Float32Array, at: number, n: number, dst: Float32Array, dstAt: number): void {
  if (type === 'q8_0') {
    const block = new Float32Array(32);
    for (let b = 0; b < n; b += 32) {
      roundQ8_0(src.subarray(at + b, at + b + 32), 0, block);
      dst.set(block, dstAt + b);
    }
  } else if (type === 'f16') {
    for (let j = 0; j < n; j++) dst[dstAt + j] = roundF16(src[at + j]!);
  } else dst.set(src.subarray(at, at + n), dstAt);
}

/** kvWrite with llama.cpp's rounding to `type` (the signature of ../ops.ts kvWrite). */
export function llamaCppKvWrite(k: Float32Array, v: Float32Array, slots: Int32Array, kvDim: number, kCache: Float32Array, vCache: Float32Array, type: KvCacheType): void {
  for (let t = 0; t < slots.length; t++) {
    roundLikeLlamaCpp(type, k, t * kvDim, kvDim, kCache, slots[t]! * kvDim);
    roundLikeLlamaCpp(type, v, t * kvDim, kvDim, vCache, slots[t]! * kvDim);
  }
}

/**
 * pagedAttention's math over a cache of `type` with llama.cpp's roundings: each query head
 * rounded to the cache's type, scores and softmax in f64, and for f16 (no flash attention) the
 * normalized weights rounded to f16 before they meet V.
 */
export function llamaCppKvAttention(type: KvCacheType) {
  return (q: Float32Array, numTokens: number, kCache: Float32Array, vCache: Float32Array, layout: AttentionLayout, out: Float32Array): void => {
    const { numHeads, numKvHeads, headDim, blockSize, positions, tokenRows, blockTables, maxBlocksPerRow } = layout;
    const groupSize = numHeads / numKvHeads;
    const kvDim = numKvHeads * headDim;
    const scale = 1 / Math.sqrt(headDim);
    const qh = new Float32Array(headDim);
    for (let t = 0; t < numTokens; t++) {
      const pos = positions[t]!;
      const tableBase = tokenRows[t]! * maxBlocksPerRow;
      const slots = Int32Array.from({ length: pos + 1 }, (_, j) => blockTables[tableBase + Math.floor(j / blockSize)]! * blockSize + (j % blockSize));
      const p = new Float64Array(pos + 1);
      for (let h = 0; h < numHeads; h++) {
        const qBase = (t * numHeads + h) * headDim;
        const kvHeadOffset = Math.floor(h / groupSize) * headDim;
        roundLikeLlamaCpp(type, q, qBase, headDim, qh, 0);
        let max = -Infinity;
        for (let j = 0; j <= pos; j++) {
          const kBase = slots[j]! * kvDim + kvHeadOffset;
          let s = 0;
          for (let d = 0; d < headDim; d++) s += qh[d]! * kCache[kBase + d]!;
          p[j] = s * scale;
          max = Math.max(max, p[j]!);
        }
        let sum = 0;
        for (let j = 0; j <= pos; j++) sum += (p[j] = Math.exp(p[j]! - max));
        for (let j = 0; j <= pos; j++) p[j] = type === 'f16' ? roundF16(p[j]! / sum) : p[j]! / sum;
        for (let d = 0; d < headDim; d++) {
          let acc = 0;
          for (let j = 0; j <= pos; j++) acc += p[j]! * vCache[slots[j]! * kvDim + kvHeadOffset + d]!;
          out[qBase + d] = acc;
        }
      }
    }
  };
}
