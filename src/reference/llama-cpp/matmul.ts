// llama.cpp's matmuls in its exact f32 order, for the 'x86-amx' emulation (oracle tests only):
// which kernel a weight goes through, and how each one accumulates. Not Cohort's own math (../ops.ts).
//
// The orders follow ggml-cpu's sources in the build node-llama-cpp 3.21.1 ships (ggml 0.23.0):
// amx/mmq.cpp, arch/x86/quants.c, vec.cpp and llamafile/sgemm.cpp, as GCC compiles them for the
// sapphirerapids variant. Each was checked bit for bit against that library, kernel by kernel.
import type { DType } from '../../model/desc';
import { f16ToF32 } from '../../model/half';
import { scaleMinK4 } from '../dequant';
import { matmul, type Matrix } from '../ops';
import { quantizeQ8K, roundActivations, type ActivationRounding } from './rounding';

export const f32 = Math.fround;

/** f32 fma through doubles: a*b is exact for f32 a and b, so only the last rounding remains. */
export const fma = (a: number, b: number, c: number): number => f32(a * b + c);

/** _mm512_reduce_add_ps as GCC expands it: 16 -> 8 (hi + lo) -> 4 -> (t0 + t2) + (t1 + t3). */
export function reduce16(a: ArrayLike<number>, at = 0): number {
  const t8 = new Array<number>(8);
  for (let i = 0; i < 8; i++) t8[i] = f32(a[at + 8 + i]! + a[at + i]!);
  const t4 = [f32(t8[4]! + t8[0]!), f32(t8[5]! + t8[1]!), f32(t8[6]! + t8[2]!), f32(t8[7]! + t8[3]!)];
  return f32(f32(t4[0]! + t4[2]!) + f32(t4[1]! + t4[3]!));
}

/** hsum_float_8 (arch/x86): ((l4 + l0) + (l6 + l2)) + ((l5 + l1) + (l7 + l3)). */
function hsum8(l: ArrayLike<number>): number {
  return f32(f32(f32(l[4]! + l[0]!) + f32(l[6]! + l[2]!)) + f32(f32(l[5]! + l[1]!) + f32(l[7]! + l[3]!)));
}

/**
 * ggml_vec_dot_f32, AVX512 branch: four 16-lane fma accumulators over steps of 64, combined
 * lane-wise as (s0 + s2) + (s1 + s3), then reduce16; a tail past the last 64 is added one by one.
 * x(i) and y(i) give the i-th elements (attention walks strided and permuted views).
 */
export function vecDotF32(n: number, x: (i: number) => number, y: (i: number) => number): number {
  const acc = new Float64Array(64);
  const whole = n - (n % 64);
  for (let i = 0; i < whole; i += 64) for (let k = 0; k < 64; k++) acc[k] = fma(x(i + k), y(i + k), acc[k]!);
  for (let l = 0; l < 16; l++) {
    acc[l] = f32(acc[l]! + acc[32 + l]!);
    acc[16 + l] = f32(acc[16 + l]! + acc[48 + l]!);
  }
  for (let l = 0; l < 16; l++) acc[l] = f32(acc[l]! + acc[16 + l]!);
  let sum = reduce16(acc);
  for (let i = whole; i < n; i++) sum = f32(sum + f32(x(i) * y(i))); // not checked against llama.cpp: no such shape here
  return sum;
}

/** llamafile's tinyBLAS<16, __m512> for one output: one 16-lane fma accumulator, then reduce16. */
export function tinyBlasDotF32(n: number, x: (i: number) => number, y: (i: number) => number): number {
  const lanes = new Float64Array(16);
  for (let i = 0; i < n; i++) lanes[i % 16] = fma(x(i), y(i), lanes[i % 16]!);
  return reduce16(lanes);
}

/**
 * The kernel a weight's matmul runs through, which fixes its accumulation order:
 * - 'amx': a q8_0/q4_0/q4_K weight in the AMX buffer (rows a multiple of 32, not token_embd):
 *   one f32 accumulator per output, blocks in order, acc = fma(sumi_block, d_w * d_x, acc);
 *   q4_K adds fma(summ, -d_x * dmin, acc) per super-block.
 * - 'lanes8': the same dtypes in the plain CPU buffer (ggml_vec_dot_*, or llamafile's
 *   tinyBLAS_Q0_AVX for several tokens, which sums alike): eight f32 lanes, lane l taking
 *   elements 4l..4l+3 of every 32-element block, then hsum_float_8.
 * - 'f32': an f32 weight: ggml_vec_dot_f32 for one token, tinyBLAS for several when
 *   cols % 16 == 0 and rows % 4 == 0.
 */
export type LlamaCppKernel = 'amx' | 'lanes8' | 'f32';

/** A weight as the emulation multiplies it: the reference's f32 matrix and what llama.cpp's kernel reads. */
export interface LlamaCppMatrix extends Matrix {
  /** How llama.cpp rounds the input rows first (its vec_dot_type); null where it multiplies in f32. */
  rounding: ActivationRounding | null;
  /** 'x86-amx' only: the kernel whose f32 order to follow; null: the reference's own order. */
  kernel: LlamaCppKernel | null;
  /** The raw ggml blocks a q4_K kernel reads (it works on the 4-bit values, not on `data`), else null. */
  q4KBlocks: Uint8Array | null;
}

/**
 * out [numTokens, w.rows] = x [numTokens, w.cols] times w as llama.cpp computes it: x rounded to
 * w's vec_dot_type, then w's kernel, or the reference's own matmul where no kernel is emulated.
 */
export function matmulLikeLlamaCpp(x: Float32Array, numTokens: number, w: LlamaCppMatrix, bias: Float32Array | null, out: Float32Array): void {
  if (w.q4KBlocks && w.kernel && w.kernel !== 'f32') {
    return llamaCppQ4KMatmul(x, numTokens, w.q4KBlocks, w.rows, w.cols, w.kernel, bias, out);
  }
  const xs = w.rounding ? roundActivations(x, numTokens, w.cols, w.rounding) : x;
  if (w.kernel) return llamaCppMatmul(xs, numTokens, w.data, w.rows, w.cols, w.kernel, bias, out);
  matmul(xs, numTokens, w, bias, out);
}

/** Where llama.cpp's sapphirerapids build puts a weight (amx.cpp's supports_op; token_embd stays put). */
export function llamaCppKernel(dtype: DType, rows: number, name: string): LlamaCppKernel | null {
  if (dtype === 'f32') return 'f32';
  if (dtype !== 'q8_0' && dtype !== 'q4_0' && dtype !== 'q4_K') return null;
  return rows % 32 === 0 && name !== 'model.embed_tokens.weight' ? 'amx' : 'lanes8';
}

/**
 * One output of a q8_0/q4_0 matmul: a, b hold q8_0-rounded inputs and dequantized weights, each
 * an f16 scale times a small integer, so a 4- or 32-element sum in doubles is exact and equals
 * sumi * d_w * d_x; Math.fround(acc + exact) is then the fma's single rounding.
 */
function dotQ8(a: Float32Array, aBase: number, b: Float32Array, bBase: number, n: number, kernel: 'amx' | 'lanes8'): number {
  if (kernel === 'amx') {
    let acc = 0;
    for (let block = 0; block < n; block += 32) {
      let s = 0;
      for (let j = block; j < block + 32; j++) s += a[aBase + j]! * b[bBase + j]!;
      acc = f32(acc + s);
    }
    return acc;
  }
  const lanes = [0, 0, 0, 0, 0, 0, 0, 0];
  for (let block = 0; block < n; block += 32) {
    for (let l = 0; l < 8; l++) {
      let s = 0;
      for (let j = block + 4 * l; j < block + 4 * l + 4; j++) s += a[aBase + j]! * b[bBase + j]!;
      lanes[l] = f32(lanes[l]! + s);
    }
  }
  return hsum8(lanes);
}

/**
 * out [numTokens, rows] = x [numTokens, cols] (already rounded as llama.cpp rounds it) times a
 * q8_0/q4_0/f32 weight w [rows, cols] (dequantized), in the kernel's order; the bias is a
 * separate f32 add (ggml_add), as in llama.cpp's graph.
 */
export function llamaCppMatmul(x: Float32Array, numTokens: number, w: Float32Array, rows: number, cols: number, kernel: LlamaCppKernel, bias: Float32Array | null, out: Float32Array): void {
  const tinyBlas = kernel === 'f32' && numTokens > 1 && cols % 16 === 0 && rows % 4 === 0;
  for (let r = 0; r < rows; r++) {
    const b = bias ? bias[r]! : 0;
    for (let t = 0; t < numTokens; t++) {
      let dot: number;
      if (kernel !== 'f32') dot = dotQ8(x, t * cols, w, r * cols, cols, kernel);
      else {
        const xi = (i: number) => x[t * cols + i]!;
        const wi = (i: number) => w[r * cols + i]!;
        dot = tinyBlas ? tinyBlasDotF32(cols, xi, wi) : vecDotF32(cols, xi, wi);
      }
      out[t * rows + r] = f32(dot + b);
    }
  }
}

/** One q4_K weight row's blocks unpacked: 4-bit quants, 6-bit scales and mins, f16 d and dmin. */
interface Q4KRow {
  /** [cols] */
  q4: Uint8Array;
  /** [numBlocks * 8] */
  scales: Int32Array;
  /** [numBlocks * 8] */
  mins: Int32Array;
  /** [numBlocks] */
  d: Float64Array;
  /** [numBlocks] */
  dmin: Float64Array;
}

function unpackQ4KRow(raw: Uint8Array, row: number, nb: number, into: Q4KRow): void {
  for (let i = 0; i < nb; i++) {
    const o = (row * nb + i) * 144;
    into.d[i] = f16ToF32(raw[o]! | (raw[o + 1]! << 8));
    into.dmin[i] = f16ToF32(raw[o + 2]! | (raw[o + 3]! << 8));
    for (let j = 0; j < 8; j++) [into.scales[i * 8 + j], into.mins[i * 8 + j]] = scaleMinK4(j, raw, o + 4);
    for (let e = 0; e < 256; e++) {
      const byte = raw[o + 16 + 32 * (e >> 6) + (e & 31)]!;
      into.q4[i * 256 + e] = e & 32 ? byte >> 4 : byte & 0xf;
    }
  }
}

/**
 * A q4_K weight [rows, cols] (its raw ggml blocks) times x rounded to q8_K, in llama.cpp's order:
 * 'amx' (tinygemm_kernel_vnni / acc_C for q4_K x q8_K): per super-block, exact
 * sumi = sum_j sc_j * (q4 . q8)_j and summ = sum_j m_j * bsum_j, then
 * c = fma(sumi, d_x * d, c); c = fma(summ, -d_x * dmin, c).
 * 'lanes8' (ggml_vec_dot_q4_K_q8_K, AVX2): eight lanes of scaled 4-element sums, four min lanes
 * over sub-block pairs, then hsum_float_8(lanes) + ((m0 + m2) + (m1 + m3)).
 */
export function llamaCppQ4KMatmul(x: Float32Array, numTokens: number, raw: Uint8Array, rows: number, cols: number, kernel: 'amx' | 'lanes8', bias: Float32Array | null, out: Float32Array): void {
  const nb = cols / 256;
  const qx = new Int8Array(numTokens * cols);
  const dx = new Float64Array(numTokens * nb);
  for (let i = 0; i < numTokens * nb; i++) dx[i] = quantizeQ8K(x, i * 256, qx.subarray(i * 256, i * 256 + 256));
  const bsums = new Int32Array(numTokens * cols / 32);
  for (let i = 0; i < bsums.length; i++) for (let e = 0; e < 32; e++) bsums[i] += qx[i * 32 + e]!;
  const w: Q4KRow = { q4: new Uint8Array(cols), scales: new Int32Array(nb * 8), mins: new Int32Array(nb * 8), d: new Float64Array(nb), dmin: new Float64Array(nb) };
  for (let r = 0; r < rows; r++) {
    unpackQ4KRow(raw, r, nb, w); // once per row, shared by every token
    for (let t = 0; t < numTokens; t++) {
      let c = 0;
      const lanes = [0, 0, 0, 0, 0, 0, 0, 0];
      const minLanes = [0, 0, 0, 0];
      for (let i = 0; i < nb; i++) {
        const d = w.d[i]!;
        const dmin = w.dmin[i]!;
        const sc = w.scales.subarray(i * 8, i * 8 + 8);
        const mn = w.mins.subarray(i * 8, i * 8 + 8);
        const q4 = w.q4.subarray(i * 256, i * 256 + 256);
        const xq = t * cols + i * 256;
        const dxi = dx[t * nb + i]!;
        const bsum = (j: number) => bsums[xq / 32 + j]!;
        if (kernel === 'amx') {
          let sumi = 0;
          let summ = 0;
          for (let j = 0; j < 8; j++) {
            let s = 0;
            for (let e = 32 * j; e < 32 * j + 32; e++) s += q4[e]! * qx[xq + e]!;
            sumi += sc[j]! * s;
            summ += mn[j]! * bsum(j);
          }
          c = fma(f32(sumi), f32(dxi * d), c);
          c = fma(f32(summ), f32(-dxi * dmin), c);
        } else {
          const dd = f32(dxi * d);
          const dm = f32(-dxi * dmin);
          for (let l = 0; l < 8; l++) {
            let s = 0;
            for (let j = 0; j < 8; j++) {
              let p = 0;
              for (let e = 32 * j + 4 * l; e < 32 * j + 4 * l + 4; e++) p += q4[e]! * qx[xq + e]!;
              s += sc[j]! * p;
            }
            lanes[l] = fma(dd, f32(s), lanes[l]!);
          }
          for (let k = 0; k < 4; k++) minLanes[k] = fma(dm, f32(mn[2 * k]! * bsum(2 * k) + mn[2 * k + 1]! * bsum(2 * k + 1)), minLanes[k]!);
        }
      }
      if (kernel === 'lanes8') c = f32(hsum8(lanes) + f32(f32(minLanes[0]! + minLanes[2]!) + f32(minLanes[1]! + minLanes[3]!)));
      out[t * rows + r] = f32(c + (bias ? bias[r]! : 0));
    }
  }
}
