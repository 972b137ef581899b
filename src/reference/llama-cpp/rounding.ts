// How llama.cpp's CPU backend rounds a matmul's input rows before multiplying them with a
// quantized weight (its vec_dot_type): q8_0 blocks of 32 for q8_0/q4_0 weights, q8_K blocks of
// 256 for k-quants. Only for holding the reference to llama.cpp; Cohort's own runners never
// round activations (the GPU kernels multiply f32 activations with dequantized weights).
import type { DType } from '../../model/desc';
import { f16ToF32, f32ToF16 } from '../../model/half';

export type ActivationRounding = 'q8_0' | 'q8_K';

/**
 * How closely the emulation imitates llama.cpp's CPU backend:
 * - 'rounding': its 8-bit rounding of quantized matmuls' inputs, the math otherwise in the
 *   reference's own f32 order. Most steps then agree to ~1e-6 with any llama.cpp build, but a
 *   ~1e-7 difference now and then flips a later rounding and moves a logit by up to ~0.07.
 * - 'x86-amx': also every op's exact f32 order in the build node-llama-cpp loads on x86 CPUs
 *   with AMX (libggml-cpu-sapphirerapids.so, quantized layers in the AMX buffer); see
 *   matmul.ts and ops.ts. Logits then match llama.cpp's bit for bit.
 */
export type LlamaCppEmulation = 'rounding' | 'x86-amx';

/** llama.cpp's vec_dot_type for a weight dtype, or null where it multiplies in f32. */
export function llamaCppRounding(dtype: DType): ActivationRounding | null {
  if (dtype === 'q8_0' || dtype === 'q4_0') return 'q8_0';
  if (dtype === 'q4_K' || dtype === 'q6_K') return 'q8_K';
  return null;
}

/** Round half to even, as the x86 build's _mm256_round_ps and nearest_int() do. */
export function roundEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** q8_0 (quantize_row_q8_0, AVX2 path): d = amax / 127 kept as f16, q = round(x * 127 / amax). */
export function roundQ8_0(x: Float32Array, at: number, out: Float32Array): void {
  let amax = 0;
  for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[at + j]!));
  const d = f16ToF32(f32ToF16(Math.fround(amax / 127)));
  const id = amax !== 0 ? Math.fround(127 / amax) : 0;
  for (let j = 0; j < 32; j++) out[at + j] = Math.fround(d * roundEven(Math.fround(x[at + j]! * id)));
}

/**
 * quantize_row_q8_K_ref on the 256-block at `at`: the signed extreme maps to -127; fills q with
 * the 8-bit values and returns d = 1 / iscale (f32; 0 for an all-zero block).
 */
export function quantizeQ8K(x: Float32Array, at: number, q: Int8Array): number {
  let amax = 0;
  let max = 0;
  for (let j = 0; j < 256; j++) {
    const ax = Math.abs(x[at + j]!);
    if (ax > amax) {
      amax = ax;
      max = x[at + j]!;
    }
  }
  if (amax === 0) {
    q.fill(0);
    return 0;
  }
  const iscale = Math.fround(-127 / max);
  for (let j = 0; j < 256; j++) q[j] = Math.min(127, roundEven(Math.fround(iscale * x[at + j]!)));
  return Math.fround(1 / iscale);
}

const q8KScratch = new Int8Array(256);

/** q8_K rounding: d times the 8-bit values, as llama.cpp's k-quant dot products see the input. */
function roundQ8_K(x: Float32Array, at: number, out: Float32Array): void {
  const d = quantizeQ8K(x, at, q8KScratch);
  for (let j = 0; j < 256; j++) out[at + j] = Math.fround(d * q8KScratch[j]!);
}

/** x [numTokens, cols] rounded the way llama.cpp feeds it to a matmul; a new array. */
export function roundActivations(x: Float32Array, numTokens: number, cols: number, rounding: ActivationRounding): Float32Array {
  const block = rounding === 'q8_0' ? 32 : 256;
  if (cols % block !== 0) throw new Error(`${rounding} rounding needs rows that are whole ${block}-element blocks, not ${cols}`);
  const out = new Float32Array(numTokens * cols);
  const round = rounding === 'q8_0' ? roundQ8_0 : roundQ8_K;
  for (let at = 0; at < numTokens * cols; at += block) round(x, at, out);
  return out;
}
