// roundKvValues against the model writers' ggml encoders decoded by dequant.ts: the KV pool's f16
// and q8_0 values are exactly what a GGUF tensor of that dtype holds. Pure CPU.
import { describe, expect, it } from 'vitest';
import { encodeTensor } from '../../tools/models/quantize';
import { f16ToF32, f32ToF16 } from '../model/half';
import { dequantize } from './dequant';
import { roundKvValues, roundQ8_0Block } from './kv-rounding';

/** Values with every q8_0 edge: ties at .5 steps, zero blocks, a block of one sign, large and tiny magnitudes. */
function awkwardValues(): Float32Array {
  const x = new Float32Array(32 * 6);
  let s = 7;
  for (let i = 0; i < x.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    x[i] = ((s >>> 8) / 2 ** 24 - 0.5) * 6;
  }
  x.fill(0, 32, 64); // an all-zero block: d = 0, quants 0
  for (let j = 0; j < 32; j++) x[64 + j] = (j - 16) * 0.5 + (j === 31 ? 0.25 : 0); // amax 7.75: many exact halves of d
  for (let j = 0; j < 32; j++) x[96 + j] = 1e-6 * (j + 1); // subnormal-range f16 scale
  for (let j = 0; j < 32; j++) x[128 + j] = 3e4 * Math.sin(j); // large
  return x;
}

describe('roundKvValues', () => {
  it('f16: round to nearest even, as the f16 writer', () => {
    const x = awkwardValues();
    const out = new Float32Array(x.length);
    roundKvValues('f16', x, 0, x.length, out, 0);
    const decoded = dequantize({ name: 'f16', dtype: 'f16', shape: [x.length], data: encodeTensor(x, x.length, 'f16') });
    expect(Array.from(out)).toEqual(Array.from(decoded));
    expect(out[1]).toBe(f16ToF32(f32ToF16(x[1]!)));
  });

  it('q8_0: the q8_0 writer (quantize_row_q8_0_ref) decoded, block by block, at any offset', () => {
    const x = awkwardValues();
    const out = new Float32Array(x.length + 5);
    roundKvValues('q8_0', x, 0, x.length, out, 5);
    const decoded = dequantize({ name: 'q8', dtype: 'q8_0', shape: [x.length], data: encodeTensor(x, x.length, 'q8_0') });
    expect(Array.from(out.subarray(5))).toEqual(Array.from(decoded));
    expect(Array.from(out.subarray(5 + 32, 5 + 64)).every((v) => v === 0)).toBe(true);
  });

  it('q8_0: ties round away from zero (roundf, not round half to even)', () => {
    const x = new Float32Array(32);
    x[0] = 127; // d = 1 exactly, id = 1
    x[1] = 2.5;
    x[2] = -2.5;
    x[3] = 0.5;
    const out = new Float32Array(32);
    roundQ8_0Block(x, 0, out, 0);
    expect(Array.from(out.subarray(0, 4))).toEqual([127, 3, -3, 1]);
  });

  it('f32 stores values as they are', () => {
    const x = awkwardValues();
    const out = new Float32Array(x.length);
    roundKvValues('f32', x, 0, x.length, out, 0);
    expect(out).toEqual(x);
  });
});
