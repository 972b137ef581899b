// Dequantization of every stored encoding to f32, bit-exact with ggml's dequantize_row_*
// (products rounded to f32 one at a time, no fused multiply-add). Not a quantizer.
import type { TensorDesc } from '../model/desc';
import { BLOCK_LAYOUTS, rowBytes } from '../model/quant-layout';
import { bf16ToF32, f16ToF32 } from '../model/half';

const fround = Math.fround;

/** Rows and columns of a tensor: [rows, cols] for matrices, [1, n] for vectors. */
export function rowsCols(t: TensorDesc): { rows: number; cols: number } {
  const cols = t.shape[t.shape.length - 1] ?? 1;
  const rows = t.shape.slice(0, -1).reduce((a, b) => a * b, 1);
  return { rows, cols };
}

function u16(b: Uint8Array, o: number): number {
  return b[o] | (b[o + 1] << 8);
}

/** Decodes `numBlocks` blocks starting at byte `src` of `b` into out[dst..]. */
function dequantBlocks(dtype: TensorDesc['dtype'], b: Uint8Array, src: number, numBlocks: number, out: Float32Array, dst: number): void {
  switch (dtype) {
    case 'f32': {
      const view = new DataView(b.buffer, b.byteOffset + src, numBlocks * 4);
      for (let i = 0; i < numBlocks; i++) out[dst + i] = view.getFloat32(i * 4, true);
      return;
    }
    case 'f16':
      for (let i = 0; i < numBlocks; i++) out[dst + i] = f16ToF32(u16(b, src + 2 * i));
      return;
    case 'bf16':
      for (let i = 0; i < numBlocks; i++) out[dst + i] = bf16ToF32(u16(b, src + 2 * i));
      return;
    case 'q8_0':
      for (let i = 0; i < numBlocks; i++, src += 34, dst += 32) {
        const d = f16ToF32(u16(b, src));
        for (let j = 0; j < 32; j++) out[dst + j] = fround(((b[src + 2 + j] << 24) >> 24) * d);
      }
      return;
    case 'q4_0':
      for (let i = 0; i < numBlocks; i++, src += 18, dst += 32) {
        const d = f16ToF32(u16(b, src));
        for (let j = 0; j < 16; j++) {
          const q = b[src + 2 + j];
          out[dst + j] = fround(((q & 0xf) - 8) * d);
          out[dst + j + 16] = fround(((q >> 4) - 8) * d);
        }
      }
      return;
    case 'q4_K':
      for (let i = 0; i < numBlocks; i++, src += 144, dst += 256) dequantQ4KBlock(b, src, out, dst);
      return;
    case 'q6_K':
      for (let i = 0; i < numBlocks; i++, src += 210, dst += 256) dequantQ6KBlock(b, src, out, dst);
      return;
  }
}

/** ggml's get_scale_min_k4: the j-th 6-bit scale and min packed in 12 bytes at `s`. */
export function scaleMinK4(j: number, b: Uint8Array, s: number): [number, number] {
  if (j < 4) return [b[s + j] & 63, b[s + j + 4] & 63];
  return [(b[s + j + 4] & 0xf) | ((b[s + j - 4] >> 6) << 4), (b[s + j + 4] >> 4) | ((b[s + j] >> 6) << 4)];
}

function dequantQ4KBlock(b: Uint8Array, src: number, out: Float32Array, dst: number): void {
  const d = f16ToF32(u16(b, src));
  const dmin = f16ToF32(u16(b, src + 2));
  const scales = src + 4;
  let q = src + 16;
  let y = dst;
  for (let j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
    const [sc1, m1q] = scaleMinK4(is, b, scales);
    const [sc2, m2q] = scaleMinK4(is + 1, b, scales);
    const d1 = fround(d * sc1);
    const m1 = fround(dmin * m1q);
    const d2 = fround(d * sc2);
    const m2 = fround(dmin * m2q);
    for (let l = 0; l < 32; l++) out[y++] = fround(fround(d1 * (b[q + l] & 0xf)) - m1);
    for (let l = 0; l < 32; l++) out[y++] = fround(fround(d2 * (b[q + l] >> 4)) - m2);
  }
}

function dequantQ6KBlock(b: Uint8Array, src: number, out: Float32Array, dst: number): void {
  const d = f16ToF32(u16(b, src + 208));
  let ql = src;
  let qh = src + 128;
  let sc = src + 192;
  let y = dst;
  const s8 = (o: number): number => (b[o] << 24) >> 24;
  for (let n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
    for (let l = 0; l < 32; l++) {
      const is = l >> 4;
      const h = b[qh + l];
      const q1 = ((b[ql + l] & 0xf) | ((h & 3) << 4)) - 32;
      const q2 = ((b[ql + l + 32] & 0xf) | (((h >> 2) & 3) << 4)) - 32;
      const q3 = ((b[ql + l] >> 4) | (((h >> 4) & 3) << 4)) - 32;
      const q4 = ((b[ql + l + 32] >> 4) | (((h >> 6) & 3) << 4)) - 32;
      out[y + l] = fround(fround(d * s8(sc + is)) * q1);
      out[y + l + 32] = fround(fround(d * s8(sc + is + 2)) * q2);
      out[y + l + 64] = fround(fround(d * s8(sc + is + 4)) * q3);
      out[y + l + 96] = fround(fround(d * s8(sc + is + 6)) * q4);
    }
  }
}

/** Decodes row `row` of t into out[0..cols). */
export function dequantizeRow(t: TensorDesc, row: number, out: Float32Array): void {
  const { rows, cols } = rowsCols(t);
  if (row < 0 || row >= rows) throw new RangeError(`${t.name}: row ${row} outside [0, ${rows})`);
  if (out.length < cols) throw new RangeError(`${t.name}: output holds ${out.length} < ${cols} values`);
  const bytesPerRow = rowBytes(t.dtype, cols);
  dequantBlocks(t.dtype, t.data, row * bytesPerRow, cols / BLOCK_LAYOUTS[t.dtype].blockElems, out, 0);
}

/** Decodes the whole tensor: [rows * cols] f32, row-major. */
export function dequantize(t: TensorDesc): Float32Array {
  const { rows, cols } = rowsCols(t);
  const out = new Float32Array(rows * cols);
  const numBlocks = (rows * cols) / BLOCK_LAYOUTS[t.dtype].blockElems;
  if (t.data.length < rowBytes(t.dtype, cols) * rows) {
    throw new RangeError(`${t.name}: ${t.data.length} bytes, shape needs ${rowBytes(t.dtype, cols) * rows}`);
  }
  dequantBlocks(t.dtype, t.data, 0, numBlocks, out, 0);
  return out;
}
