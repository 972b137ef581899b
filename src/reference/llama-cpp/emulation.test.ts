// Sanity checks of the llama.cpp emulation's pieces against plain math: each must land within a
// few f32 roundings of the exact value. Bit-exactness with llama.cpp is oracle.test.ts's job.
import { describe, expect, it } from 'vitest';
import { sampleUniform } from '../../engine/rng';
import { llamaCppMatmul, llamaCppQ4KMatmul, reduce16, tinyBlasDotF32, vecDotF32 } from './matmul';
import { glibcSincosf, llamaCppExpf, llamaCppSoftMax } from './ops';
import { roundActivations } from './rounding';
import { dequantize } from '../dequant';
import type { DType, TensorDesc } from '../../model/desc';
import { encodeTensor } from '../../../tools/models/quantize';

const ulp = (v: number): number => 2 ** (Math.floor(Math.log2(Math.max(Math.abs(v), 2 ** -126))) - 23);

function randomF32(n: number, seed: number, scale = 1): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => Math.fround((sampleUniform(seed, i) * 2 - 1) * scale));
}

function tensor(rows: number, cols: number, seed: number, dtype: DType): TensorDesc {
  return { name: 'w', dtype, shape: [rows, cols], data: encodeTensor(randomF32(rows * cols, seed), cols, dtype) };
}

describe('libm ports', () => {
  it('glibcSincosf is within one f32 ulp of sin and cos, over the range rope uses and beyond', () => {
    for (const y of [...randomF32(4000, 1, 119), ...randomF32(200, 2, 0.01), 0, 1e-5, 0.785, 3000.5]) {
      const [sin, cos] = glibcSincosf(y);
      expect(Math.abs(sin - Math.sin(y))).toBeLessThanOrEqual(ulp(Math.sin(y)));
      expect(Math.abs(cos - Math.cos(y))).toBeLessThanOrEqual(ulp(Math.cos(y)));
    }
  });

  it('llamaCppExpf is within three f32 ulps of exp, and saturates like the vector code', () => {
    for (const x of randomF32(4000, 3, 80)) expect(Math.abs(llamaCppExpf(x) - Math.exp(x))).toBeLessThanOrEqual(3 * ulp(Math.exp(x)));
    expect(llamaCppExpf(-200)).toBe(0);
    expect(llamaCppExpf(200)).toBe(Infinity);
  });
});

describe('accumulation orders', () => {
  const a = randomF32(320, 4);
  const b = randomF32(320, 5);
  const exact = a.reduce((s, v, i) => s + v * b[i]!, 0);

  it('the f32 dot products and reduce16 stay within a few roundings of the exact sum', () => {
    const tolerance = 64 * ulp(Math.max(...a.map(Math.abs))) * 8;
    expect(Math.abs(vecDotF32(320, (i) => a[i]!, (i) => b[i]!) - exact)).toBeLessThan(tolerance);
    expect(Math.abs(vecDotF32(100, (i) => a[i]!, (i) => b[i]!) - a.slice(0, 100).reduce((s, v, i) => s + v * b[i]!, 0))).toBeLessThan(tolerance);
    expect(Math.abs(tinyBlasDotF32(320, (i) => a[i]!, (i) => b[i]!) - exact)).toBeLessThan(tolerance);
    expect(reduce16(Array.from({ length: 16 }, (_, i) => i + 1))).toBe(136);
  });

  it('the q8_0 kernels (AMX and eight lanes) agree with the plain product of the rounded inputs', () => {
    const rows = 32;
    const cols = 128;
    const w = dequantize(tensor(rows, cols, 6, 'q8_0'));
    const x = roundActivations(randomF32(2 * cols, 7), 2, cols, 'q8_0');
    const bias = randomF32(rows, 8);
    for (const kernel of ['amx', 'lanes8', 'f32'] as const) {
      const out = new Float32Array(2 * rows);
      llamaCppMatmul(x, 2, w, rows, cols, kernel, bias, out);
      for (let t = 0; t < 2; t++) {
        for (let r = 0; r < rows; r++) {
          let want = bias[r]!;
          for (let i = 0; i < cols; i++) want += x[t * cols + i]! * w[r * cols + i]!;
          expect(Math.abs(out[t * rows + r]! - want)).toBeLessThan(1e-5);
        }
      }
    }
  });

  it('the q4_K kernels agree with dequantized weights times q8_K-rounded inputs', () => {
    const rows = 32;
    const cols = 512;
    const q4K = tensor(rows, cols, 9, 'q4_K');
    const w = dequantize(q4K);
    const x = randomF32(cols, 10);
    const xq = roundActivations(x, 1, cols, 'q8_K');
    for (const kernel of ['amx', 'lanes8'] as const) {
      const out = new Float32Array(rows);
      llamaCppQ4KMatmul(x, 1, q4K.data, rows, cols, kernel, null, out);
      for (let r = 0; r < rows; r++) {
        let want = 0;
        for (let i = 0; i < cols; i++) want += xq[i]! * w[r * cols + i]!;
        expect(Math.abs(out[r]! - want)).toBeLessThan(1e-4);
      }
    }
  });

  it('the softmax sums to one over the valid keys and leaves the padding at zero', () => {
    const p = Float64Array.from(randomF32(64, 11, 4));
    llamaCppSoftMax(p, 64, 40, 0.5);
    expect(p.slice(0, 40).reduce((s, v) => s + v, 0)).toBeCloseTo(1, 6);
    expect([...p.slice(40)].every((v) => v === 0)).toBe(true);
  });
});
