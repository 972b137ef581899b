// llama.cpp's non-matmul ops in its exact f32 order, for the 'x86-amx' emulation (oracle tests
// only): rms_norm, swiglu, geglu, rope, softmax and attention. Not Cohort's own math (../ops.ts).
//
// Why every op and not only the matmuls: quantized matmuls round their inputs to 8 bits, so a
// 1e-7 difference anywhere upstream can flip a rounding and move a logit by ~0.05. Orders follow
// ggml-cpu (ops.cpp, vec.h/vec.cpp) and llama-graph.cpp's build_attn_mha in the sapphirerapids
// build; sin/cos come from glibc, which ggml's rope calls. Each was checked bit for bit.
import { f32, fma, reduce16, tinyBlasDotF32, vecDotF32 } from './matmul';
import { geluTanh, type AttentionLayout } from '../ops';
import { f16ToF32, f32ToF16 } from '../../model/half';

/**
 * ggml_rms_norm then ggml_mul by the weight (ops.cpp, rms_norm_f32): the sum of f32 squares in
 * double, mean and scale in f32, y = (x * scale) * w with each product rounded.
 */
export function llamaCppRmsNorm(x: Float32Array, weight: Float32Array, numVecs: number, dim: number, eps: number, out: Float32Array): void {
  const epsF = f32(eps);
  for (let v = 0; v < numVecs; v++) {
    const base = v * dim;
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += f32(x[base + i]! * x[base + i]!);
    const scale = f32(1 / f32(Math.sqrt(f32(f32(sum / dim) + epsF))));
    for (let i = 0; i < dim; i++) out[base + i] = f32(f32(x[base + i]! * scale) * weight[i]!);
  }
}

/**
 * ggml_v_expf, AVX512 branch (vec.h; ggml is MIT-licensed): n = round(x / ln 2), a degree-5
 * polynomial in the reduced argument, scaled by 2^n (_mm512_scalef_ps).
 */
export function llamaCppExpf(x: number): number {
  const shifter = 12582912; // 0x1.8p23f
  const n = f32(fma(x, 1.4426950216293335, shifter) - shifter);
  const b = fma(-n, 1.428606765330187e-6, fma(-n, 0.693145751953125, x));
  const u = f32(b * b);
  const j = fma(fma(fma(0.008247390389442444, b, 0.04189976677298546), u, fma(0.16668395698070526, b, 0.4999912679195404)), u, fma(0.9999994039535522, b, 1));
  if (Math.abs(n) > 192) return n <= 0 ? 0 : Infinity; // the overflow/underflow lanes
  return f32(j * 2 ** n);
}

/** ggml_vec_swiglu_f32, AVX512 branch: silu(g) = g / (1 + expf(-g)) in f32, times up. */
export function llamaCppSwiglu(gate: Float32Array, up: Float32Array, n: number, out: Float32Array): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i]!;
    out[i] = f32(f32(g / f32(1 + llamaCppExpf(f32(-g)))) * up[i]!);
  }
}

/**
 * ggml_vec_geglu_f32 with GGML_GELU_FP16 (vec.h, on in every CPU build): below -10 zero, from 10
 * the gate itself, else the gate rounded to f16 looks up ggml_table_gelu_f16, tanh GELU of that
 * f16 value in f32 rounded to f16; times up in f32.
 */
export function llamaCppGeglu(gate: Float32Array, up: Float32Array, n: number, out: Float32Array): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i]!;
    let act: number;
    if (g <= -10) act = 0;
    else if (g >= 10) act = g;
    else act = f16ToF32(f32ToF16(f32(geluTanh(f16ToF32(f32ToF16(g))))));
    out[i] = f32(act * up[i]!);
  }
}

/**
 * glibc's sincosf for |y| < 120 (the algorithm of ARM's optimized-routines, MIT OR Apache-2.0,
 * which glibc ships): reduce by multiples of pi/2 in double, then a polynomial, rounded to f32.
 * glibc's result is not always the correctly rounded one (~2% of values differ from
 * Math.sin/Math.cos), and llama.cpp's rope uses it. Larger |y| falls back to Math.sin/cos.
 */
const SINCOS_POLY = [1, -1].map((sign) => ({
  c0: sign,
  c1: sign * -0.49999999725108224,
  c2: sign * 0.041666623324344516,
  c3: sign * -0.001388676379437604,
  c4: sign * 2.4390450703564542e-5,
  s1: -0.16666654943701084,
  s2: 0.008332178146138854,
  s3: -0.00019517298981385725,
}));
const HALF_PI = 1.5707963267948966;
const INV_HALF_PI_2P24 = 10680707.430881744; // 2^24 / (pi / 2)
const topScratch = new Float32Array(1);
const topBits = new Uint32Array(topScratch.buffer);

/** The top 12 bits of |y| as an f32: compares magnitudes the way glibc's branches do. */
function abstop12(y: number): number {
  topScratch[0] = y;
  return (topBits[0]! >>> 20) & 0x7ff;
}

function sincosPoly(x: number, x2: number, p: (typeof SINCOS_POLY)[number], n: number): [number, number] {
  const x3 = x2 * x;
  const x4 = x2 * x2;
  const s = x + x3 * p.s1 + x3 * x2 * (p.s2 + x2 * p.s3);
  const c = p.c0 + x2 * p.c1 + x4 * p.c2 + x4 * x2 * (p.c3 + x2 * p.c4);
  return n & 1 ? [f32(c), f32(s)] : [f32(s), f32(c)];
}

/** [sinf(y), cosf(y)] as glibc computes them for an f32 y. */
export function glibcSincosf(y: number): [number, number] {
  const top = abstop12(y);
  if (top < abstop12(0.7853981633974483)) {
    if (top < abstop12(2 ** -12)) return [y, 1];
    return sincosPoly(y, y * y, SINCOS_POLY[0]!, 0);
  }
  if (top >= abstop12(120)) return [f32(Math.sin(y)), f32(Math.cos(y))];
  const n = (((y * INV_HALF_PI_2P24) | 0) + 0x800000) >> 24;
  const x = y - n * HALF_PI;
  const sign = n & 2 ? -1 : 1;
  return sincosPoly(x * (n & 1 ? -sign : sign), x * x, SINCOS_POLY[n & 2 ? 1 : 0]!, n);
}

/**
 * ggml's rope (ops.cpp, rope_flt), no frequency factors: theta_scale = powf(base, -2 / dim), theta
 * for pair i is theta_{i-1} * theta_scale in f32 from theta_0 = pos, cos/sin by glibc's sincosf.
 * GCC contracts the rotation into fmas in both of ggml's modes: x0' = fma(cos, x0, -(sin * x1)),
 * x1' = fma(sin, x0, cos * x1). Here pairs are (i, i + half), the Hugging Face layout the
 * reference keeps for every architecture (GGUF llama rows are un-permuted at load).
 */
export function llamaCppRope(x: Float32Array, numTokens: number, numHeads: number, headDim: number, positions: Int32Array, base: number): void {
  const half = headDim / 2;
  const thetaScale = f32(Math.pow(f32(base), f32(-2 / headDim)));
  const cos = new Float64Array(half);
  const sin = new Float64Array(half);
  for (let t = 0; t < numTokens; t++) {
    let theta = f32(positions[t]!);
    for (let i = 0; i < half; i++) {
      [sin[i], cos[i]] = glibcSincosf(theta);
      theta = f32(theta * thetaScale);
    }
    for (let h = 0; h < numHeads; h++) {
      const at = (t * numHeads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const x0 = x[at + i]!;
        const x1 = x[at + i + half]!;
        x[at + i] = fma(cos[i]!, x0, -f32(sin[i]! * x1));
        x[at + i + half] = fma(sin[i]!, x0, f32(cos[i]! * x1));
      }
    }
  }
}

/**
 * ggml_soft_max_ext on one row of n keys (a multiple of 16), the first `valid` unmasked, in
 * place: w = x * scale in f32, e = expf(w - max), the sum in double of reduce16 over 16-key
 * chunks, then e * (float)(1 / sum). Masked keys come out exactly 0.
 */
export function llamaCppSoftMax(p: Float64Array, n: number, valid: number, scale: number): void {
  let max = -Infinity;
  for (let j = 0; j < valid; j++) {
    p[j] = f32(p[j]! * scale);
    if (p[j]! > max) max = p[j]!;
  }
  p.fill(0, valid, n);
  for (let j = 0; j < valid; j++) p[j] = llamaCppExpf(f32(p[j]! - max));
  let sum = 0;
  for (let c = 0; c < n; c += 16) sum += reduce16(p, c);
  const inv = f32(1 / sum);
  for (let j = 0; j < valid; j++) p[j] = f32(p[j]! * inv);
}

export interface LlamaCppAttentionLayout extends AttentionLayout {
  /** llama GGUFs keep q/k rows interleaved: llama.cpp's q . k walks element 2i = HF i, 2i+1 = HF i + half. */
  interleavedQK: boolean;
}

/**
 * llama.cpp's attention without flash attention over an f32 KV cache (build_attn_mha):
 * kq = ggml_vec_dot_f32 per key (q is a permuted view, so no llamafile), the softmax above over
 * keys zero-padded to a multiple of 64, then kqv: one token -> ggml_vec_dot_f32 over keys,
 * several -> tinyBLAS (lane = key mod 16). out [numTokens, numHeads * headDim].
 */
export function llamaCppAttention(q: Float32Array, numTokens: number, kCache: Float32Array, vCache: Float32Array, layout: LlamaCppAttentionLayout, out: Float32Array): void {
  const { numHeads, numKvHeads, headDim, blockSize, positions, tokenRows, blockTables, maxBlocksPerRow } = layout;
  const groupSize = numHeads / numKvHeads;
  const kvDim = numKvHeads * headDim;
  const scale = f32(1 / f32(Math.sqrt(headDim)));
  const half = headDim / 2;
  const dim = layout.interleavedQK ? (i: number) => (i & 1 ? half + (i >> 1) : i >> 1) : (i: number) => i;
  for (let t = 0; t < numTokens; t++) {
    const pos = positions[t]!;
    const tableBase = tokenRows[t]! * maxBlocksPerRow;
    const numKeys = Math.ceil((pos + 1) / 64) * 64;
    const slots = new Int32Array(pos + 1);
    for (let j = 0; j <= pos; j++) slots[j] = blockTables[tableBase + Math.floor(j / blockSize)]! * blockSize + (j % blockSize);
    const p = new Float64Array(numKeys);
    for (let h = 0; h < numHeads; h++) {
      const qBase = (t * numHeads + h) * headDim;
      const kvHeadOffset = Math.floor(h / groupSize) * headDim;
      for (let j = 0; j <= pos; j++) {
        const kBase = slots[j]! * kvDim + kvHeadOffset;
        p[j] = vecDotF32(headDim, (i) => q[qBase + dim(i)]!, (i) => kCache[kBase + dim(i)]!);
      }
      llamaCppSoftMax(p, numKeys, pos + 1, scale);
      for (let d = 0; d < headDim; d++) {
        const v = (j: number) => (j <= pos ? vCache[slots[j]! * kvDim + kvHeadOffset + d]! : 0);
        const weight = (j: number) => p[j]!;
        out[qBase + d] = numTokens === 1 ? vecDotF32(numKeys, v, weight) : tinyBlasDotF32(numKeys, v, weight);
      }
    }
  }
}
