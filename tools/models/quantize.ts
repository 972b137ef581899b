// Encoders f32 -> f16, bf16, q8_0, q4_0, q4_K, q6_K in ggml's exact block layouts. Not a decoder;
// q4_K/q6_K pick scales by simple min/max, not llama.cpp's error search (valid, slightly less exact).
import type { DType } from '../../src/model/desc';
import { BLOCK_LAYOUTS } from '../../src/model/quant-layout';
import { f32ToBf16, f32ToF16, f16ToF32 } from '../../src/model/half';

const fround = Math.fround;

/** ggml's nearest_int: adding 1.5 * 2^23 in f32 rounds to the nearest integer, ties to even. */
function nearestInt(x: number): number {
  return fround(fround(x) + 12582912) - 12582912;
}

/** C roundf: halves away from zero. */
function roundAway(x: number): number {
  return Math.sign(x) * Math.floor(Math.abs(x) + 0.5);
}

function putU16(out: Uint8Array, o: number, v: number): void {
  out[o] = v & 0xff;
  out[o + 1] = (v >> 8) & 0xff;
}

function quantizeQ8_0(x: Float32Array, xo: number, out: Uint8Array, o: number): void {
  let amax = 0;
  for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[xo + j]));
  const d = fround(amax / 127);
  const id = d ? fround(1 / d) : 0;
  putU16(out, o, f32ToF16(d));
  for (let j = 0; j < 32; j++) out[o + 2 + j] = roundAway(fround(x[xo + j] * id)) & 0xff;
}

function quantizeQ4_0(x: Float32Array, xo: number, out: Uint8Array, o: number): void {
  let amax = 0;
  let max = 0;
  for (let j = 0; j < 32; j++) {
    const v = x[xo + j];
    if (amax < Math.abs(v)) {
      amax = Math.abs(v);
      max = v;
    }
  }
  const d = fround(max / -8);
  const id = d ? fround(1 / d) : 0;
  putU16(out, o, f32ToF16(d));
  for (let j = 0; j < 16; j++) {
    // (int8_t)(v + 8.5f) truncates toward zero, then MIN(15, .)
    const xi0 = Math.min(15, Math.trunc(fround(fround(x[xo + j] * id) + 8.5)));
    const xi1 = Math.min(15, Math.trunc(fround(fround(x[xo + 16 + j] * id) + 8.5)));
    out[o + 2 + j] = (xi0 & 0xf) | ((xi1 & 0xf) << 4);
  }
}

function quantizeQ4K(x: Float32Array, xo: number, out: Uint8Array, o: number): void {
  // Per 32-element sub-block: scale = (max - min) / 15 with min clamped to <= 0, like ggml.
  const scales = new Float32Array(8);
  const mins = new Float32Array(8);
  let maxScale = 0;
  let maxMin = 0;
  for (let j = 0; j < 8; j++) {
    let mn = 0;
    let mx = -Infinity;
    for (let l = 0; l < 32; l++) {
      const v = x[xo + 32 * j + l];
      mn = Math.min(mn, v);
      mx = Math.max(mx, v);
    }
    scales[j] = (mx - mn) / 15;
    mins[j] = -mn;
    maxScale = Math.max(maxScale, scales[j]);
    maxMin = Math.max(maxMin, mins[j]);
  }
  const invScale = maxScale > 0 ? 63 / maxScale : 0;
  const invMin = maxMin > 0 ? 63 / maxMin : 0;
  const sc = out.subarray(o + 4, o + 16);
  sc.fill(0);
  for (let j = 0; j < 8; j++) {
    const ls = Math.min(63, nearestInt(invScale * scales[j]));
    const lm = Math.min(63, nearestInt(invMin * mins[j]));
    if (j < 4) {
      sc[j] = ls;
      sc[j + 4] = lm;
    } else {
      sc[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
      sc[j - 4] |= (ls >> 4) << 6;
      sc[j] |= (lm >> 4) << 6;
    }
  }
  const dBits = f32ToF16(maxScale / 63);
  const dminBits = f32ToF16(maxMin / 63);
  putU16(out, o, dBits);
  putU16(out, o + 2, dminBits);
  const L = new Uint8Array(256);
  for (let j = 0; j < 8; j++) {
    const [s, m] = scaleMin(j, sc);
    const d = fround(f16ToF32(dBits) * s);
    if (!d) continue;
    const dm = fround(f16ToF32(dminBits) * m);
    for (let l = 0; l < 32; l++) {
      L[32 * j + l] = Math.max(0, Math.min(15, nearestInt((x[xo + 32 * j + l] + dm) / d)));
    }
  }
  const q = o + 16;
  for (let j = 0; j < 256; j += 64) {
    for (let l = 0; l < 32; l++) out[q + j / 2 + l] = L[j + l] | (L[j + l + 32] << 4);
  }
}

function scaleMin(j: number, q: Uint8Array): [number, number] {
  if (j < 4) return [q[j] & 63, q[j + 4] & 63];
  return [(q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4)];
}

function quantizeQ6K(x: Float32Array, xo: number, out: Uint8Array, o: number): void {
  // Per 16-element sub-block: scale = signed max / -32 (the value with the largest magnitude).
  const scales = new Float32Array(16);
  let maxScale = 0;
  let maxAbsScale = 0;
  for (let ib = 0; ib < 16; ib++) {
    let amax = 0;
    let max = 0;
    for (let l = 0; l < 16; l++) {
      const v = x[xo + 16 * ib + l];
      if (Math.abs(v) > amax) {
        amax = Math.abs(v);
        max = v;
      }
    }
    scales[ib] = max / -32;
    if (Math.abs(scales[ib]) > maxAbsScale) {
      maxAbsScale = Math.abs(scales[ib]);
      maxScale = scales[ib];
    }
  }
  const ql = o;
  const qh = o + 128;
  const sc = o + 192;
  out.fill(0, o, o + 210);
  if (maxAbsScale === 0) return; // all zeros: d = 0 decodes to zeros
  const iscale = -128 / maxScale;
  const dBits = f32ToF16(1 / iscale);
  putU16(out, o + 208, dBits);
  for (let ib = 0; ib < 16; ib++) out[sc + ib] = Math.min(127, nearestInt(iscale * scales[ib])) & 0xff;
  const L = new Uint8Array(256);
  for (let j = 0; j < 16; j++) {
    const d = fround(f16ToF32(dBits) * ((out[sc + j] << 24) >> 24));
    if (!d) continue;
    for (let ii = 0; ii < 16; ii++) {
      const l = Math.max(-32, Math.min(31, nearestInt(x[xo + 16 * j + ii] / d)));
      L[16 * j + ii] = l + 32;
    }
  }
  for (let j = 0, qlo = ql, qho = qh; j < 256; j += 128, qlo += 64, qho += 32) {
    for (let l = 0; l < 32; l++) {
      const q1 = L[j + l] & 0xf;
      const q2 = L[j + l + 32] & 0xf;
      const q3 = L[j + l + 64] & 0xf;
      const q4 = L[j + l + 96] & 0xf;
      out[qlo + l] = q1 | (q3 << 4);
      out[qlo + l + 32] = q2 | (q4 << 4);
      out[qho + l] = (L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6);
    }
  }
}

const BLOCK_ENCODERS: Partial<Record<DType, (x: Float32Array, xo: number, out: Uint8Array, o: number) => void>> = {
  q8_0: quantizeQ8_0,
  q4_0: quantizeQ4_0,
  q4_K: quantizeQ4K,
  q6_K: quantizeQ6K,
};

/** True when rows of `cols` elements can be stored as dtype (whole blocks). */
export function canEncode(dtype: DType, cols: number): boolean {
  return cols % BLOCK_LAYOUTS[dtype].blockElems === 0;
}

/** Encodes row-major f32 values with `cols` elements per row as dtype. */
export function encodeTensor(values: Float32Array, cols: number, dtype: DType): Uint8Array {
  const { blockElems, blockBytes } = BLOCK_LAYOUTS[dtype];
  if (values.length % cols !== 0 || cols % blockElems !== 0) {
    throw new Error(`cannot encode ${values.length} values with ${cols} per row as ${dtype}`);
  }
  const numBlocks = values.length / blockElems;
  const out = new Uint8Array(numBlocks * blockBytes);
  if (dtype === 'f32') {
    out.set(new Uint8Array(Float32Array.from(values).buffer));
  } else if (dtype === 'f16' || dtype === 'bf16') {
    const enc = dtype === 'f16' ? f32ToF16 : f32ToBf16;
    for (let i = 0; i < values.length; i++) putU16(out, 2 * i, enc(values[i]));
  } else {
    const encode = BLOCK_ENCODERS[dtype]!;
    for (let i = 0; i < numBlocks; i++) encode(values, i * blockElems, out, i * blockBytes);
  }
  return out;
}
