// Dequantization against hand-built ggml blocks (values worked out from the block spec) and
// quantize -> dequantize error bounds. Not loader tests.
import { describe, expect, it } from 'vitest';
import type { DType, TensorDesc } from '../model/desc';
import { f32ToF16 } from '../model/half';
import { encodeTensor } from '../../tools/models/quantize';
import { dequantize, dequantizeRow } from './dequant';

const fr = Math.fround;

function tensor(dtype: DType, shape: number[], data: Uint8Array): TensorDesc {
  return { name: 't', dtype, shape, data };
}

function putHalf(b: Uint8Array, o: number, v: number): void {
  const h = f32ToF16(v);
  b[o] = h & 0xff;
  b[o + 1] = h >> 8;
}

describe('dequantize', () => {
  it('decodes f32, f16 and bf16 little-endian', () => {
    const f32 = new Uint8Array(new Float32Array([1.5, -2.25]).buffer);
    expect(dequantize(tensor('f32', [2], f32))).toEqual(new Float32Array([1.5, -2.25]));
    // f16 0x3c00 = 1, 0xc000 = -2, 0x0001 = 2^-24 (smallest subnormal), 0x7bff = 65504
    const f16 = new Uint8Array([0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0xff, 0x7b]);
    expect(dequantize(tensor('f16', [4], f16))).toEqual(new Float32Array([1, -2, 2 ** -24, 65504]));
    // bf16 0x3fc0 = 1.5, 0xc080 = -4
    const bf16 = new Uint8Array([0xc0, 0x3f, 0x80, 0xc0]);
    expect(dequantize(tensor('bf16', [2], bf16))).toEqual(new Float32Array([1.5, -4]));
  });

  it('decodes a q8_0 block as d * qs', () => {
    const b = new Uint8Array(34);
    putHalf(b, 0, 0.5);
    const qs = Array.from({ length: 32 }, (_, j) => j * 8 - 128); // -128 .. 120
    qs.forEach((q, j) => (b[2 + j] = q & 0xff));
    expect(dequantize(tensor('q8_0', [32], b))).toEqual(new Float32Array(qs.map((q) => q * 0.5)));
  });

  it('decodes a q4_0 block: low nibbles first half, high nibbles second half, offset 8', () => {
    const b = new Uint8Array(18);
    putHalf(b, 0, 2);
    for (let j = 0; j < 16; j++) b[2 + j] = j | ((15 - j) << 4);
    const want = new Float32Array(32);
    for (let j = 0; j < 16; j++) {
      want[j] = (j - 8) * 2;
      want[j + 16] = (7 - j) * 2;
    }
    expect(dequantize(tensor('q4_0', [32], b))).toEqual(want);
  });

  it('decodes a q4_K block with 6-bit scales and mins above 15', () => {
    const b = new Uint8Array(144);
    const d = 0.0625;
    const dmin = 0.5;
    putHalf(b, 0, d);
    putHalf(b, 2, dmin);
    const sc = [1, 7, 20, 33, 40, 47, 58, 63];
    const mn = [0, 63, 5, 17, 31, 32, 48, 2];
    const scales = b.subarray(4, 16);
    for (let j = 0; j < 4; j++) {
      scales[j] = sc[j] | ((sc[j + 4] >> 4) << 6);
      scales[j + 4] = mn[j] | ((mn[j + 4] >> 4) << 6);
      scales[j + 8] = (sc[j + 4] & 0xf) | ((mn[j + 4] & 0xf) << 4);
    }
    for (let i = 0; i < 128; i++) b[16 + i] = (i % 16) | ((15 - (i % 13)) << 4);
    const want = new Float32Array(256);
    for (let g = 0; g < 4; g++) {
      for (let l = 0; l < 32; l++) {
        const q = b[16 + 32 * g + l];
        want[64 * g + l] = fr(fr(fr(d * sc[2 * g]) * (q & 0xf)) - fr(dmin * mn[2 * g]));
        want[64 * g + 32 + l] = fr(fr(fr(d * sc[2 * g + 1]) * (q >> 4)) - fr(dmin * mn[2 * g + 1]));
      }
    }
    expect(dequantize(tensor('q4_K', [256], b))).toEqual(want);
  });

  it('decodes a q6_K block: 4 low bits in ql, 2 high bits in qh, signed 8-bit scales', () => {
    const L = Array.from({ length: 256 }, (_, k) => (k * 37 + 11) % 64);
    const scales = Array.from({ length: 16 }, (_, i) => i * 9 - 70);
    const b = new Uint8Array(210);
    for (let n = 0; n < 2; n++) {
      for (let l = 0; l < 32; l++) {
        const at = (k: number): number => L[128 * n + l + k];
        b[64 * n + l] = (at(0) & 0xf) | ((at(64) & 0xf) << 4);
        b[64 * n + l + 32] = (at(32) & 0xf) | ((at(96) & 0xf) << 4);
        b[128 + 32 * n + l] = (at(0) >> 4) | ((at(32) >> 4) << 2) | ((at(64) >> 4) << 4) | ((at(96) >> 4) << 6);
      }
    }
    scales.forEach((s, i) => (b[192 + i] = s & 0xff));
    putHalf(b, 208, 0.25);
    const want = new Float32Array(L.map((q, k) => fr(fr(0.25 * scales[k >> 4]) * (q - 32))));
    expect(dequantize(tensor('q6_K', [256], b))).toEqual(want);
  });

  it('dequantizeRow decodes exactly the row dequantize gives', () => {
    const values = Float32Array.from({ length: 3 * 512 }, (_, i) => Math.sin(i * 0.37) * (1 + (i % 7)));
    for (const dtype of ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'] as DType[]) {
      const t = tensor(dtype, [3, 512], encodeTensor(values, 512, dtype));
      const all = dequantize(t);
      const row = new Float32Array(512);
      dequantizeRow(t, 2, row);
      expect(row, dtype).toEqual(all.subarray(1024, 1536));
    }
  });

  it('rejects rows outside the tensor', () => {
    const t = tensor('f32', [2, 4], new Uint8Array(32));
    expect(() => dequantizeRow(t, 2, new Float32Array(4))).toThrow(RangeError);
  });
});

describe('quantize then dequantize', () => {
  // Per-dtype bound on |error| relative to the largest magnitude in each block of values.
  const bounds: Array<[DType, number]> = [['f16', 1e-3], ['bf16', 8e-3], ['q8_0', 1 / 127], ['q4_0', 1 / 8], ['q4_K', 0.15], ['q6_K', 1 / 32]];
  const values = Float32Array.from({ length: 4 * 256 }, (_, i) => Math.sin(i * 1.7) * Math.cos(i * 0.05) * 3 + (i % 5 === 0 ? 0.8 : 0));
  for (const [dtype, bound] of bounds) {
    it(`${dtype} stays within ${bound.toPrecision(3)} of each block's range`, () => {
      const back = dequantize(tensor(dtype, [4, 256], encodeTensor(values, 256, dtype)));
      for (let blockStart = 0; blockStart < values.length; blockStart += 32) {
        const blk = values.subarray(blockStart, blockStart + 32);
        const amax = Math.max(...blk.map(Math.abs));
        for (let j = 0; j < 32; j++) {
          expect(Math.abs(back[blockStart + j] - blk[j])).toBeLessThanOrEqual(bound * amax + 1e-6);
        }
      }
    });
  }

  it('every block encoder maps an all-zero block to (signed) zeros', () => {
    for (const dtype of ['q8_0', 'q4_0', 'q4_K', 'q6_K'] as DType[]) {
      const back = dequantize(tensor(dtype, [256], encodeTensor(new Float32Array(256), 256, dtype)));
      expect(back.every((v) => v === 0), dtype).toBe(true);
    }
  });
});
