// llama.cpp's activation rounding: q8_0 and q8_K blocks reproduce values on their 8-bit grids.
// Not a check against llama.cpp itself: oracle.test.ts holds the whole emulation to that.
import { describe, expect, it } from 'vitest';
import { f16ToF32, f32ToF16 } from '../../model/half';
import { llamaCppRounding, roundActivations } from './rounding';

const x = Float32Array.from({ length: 512 }, (_, i) => Math.sin(i * 0.37) * (1 + (i % 7)));

describe('roundActivations', () => {
  it('q8_0: every value is an integer step of the block scale (amax / 127, as f16), the extreme exact up to f16', () => {
    const out = roundActivations(x, 2, 256, 'q8_0');
    for (let b = 0; b < 16; b++) {
      const block = x.subarray(b * 32, b * 32 + 32);
      const amax = Math.max(...Array.from(block, Math.abs));
      const d = f16ToF32(f32ToF16(amax / 127));
      for (let j = 0; j < 32; j++) {
        const q = out[b * 32 + j]! / d;
        expect(Math.abs(q - Math.round(q))).toBeLessThan(1e-3);
        expect(Math.abs(q)).toBeLessThanOrEqual(127);
        expect(Math.abs(out[b * 32 + j]! - block[j]!)).toBeLessThanOrEqual(d * 0.5 + amax * 1e-3);
      }
    }
  });

  it('q8_K: the signed extreme of each 256-block maps to -127 steps exactly', () => {
    const out = roundActivations(x, 1, 512, 'q8_K');
    for (let b = 0; b < 2; b++) {
      const block = Array.from(x.subarray(b * 256, b * 256 + 256));
      const at = block.reduce((best, v, i) => (Math.abs(v) > Math.abs(block[best]!) ? i : best), 0);
      expect(out[b * 256 + at]).toBeCloseTo(block[at]!, 5);
    }
  });

  it('maps weight dtypes to llama.cpp vec_dot types and refuses partial blocks', () => {
    expect(llamaCppRounding('q4_0')).toBe('q8_0');
    expect(llamaCppRounding('q6_K')).toBe('q8_K');
    expect(llamaCppRounding('f32')).toBeNull();
    expect(() => roundActivations(x, 1, 48, 'q8_0')).toThrow(/whole 32-element blocks/);
  });
});
