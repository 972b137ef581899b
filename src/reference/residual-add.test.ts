// Unit tests of the CPU residual add (the oracle for shaders/residual_add.wgsl).
// The GPU parity test lives in src/gpu/residual-add.test.ts.
import { describe, expect, it } from 'vitest';
import { residualAdd } from './residual-add';

describe('residualAdd', () => {
  it('adds elementwise and rounds each sum to f32', () => {
    const a = new Float32Array([1, -2.5, 1e8, 3]);
    const b = new Float32Array([2, 0.5, 1, 2 ** -30]);
    // 1e8 + 1 and 3 + 2^-30 are not representable in f32: they round back to the larger term.
    expect(Array.from(residualAdd(a, b))).toEqual([3, -2, 1e8, 3]);
  });

  it('writes into a caller-provided output, which may alias the first input', () => {
    const a = new Float32Array([1, 2, 3]);
    const result = residualAdd(a, new Float32Array([10, 20, 30]), a);
    expect(result).toBe(a);
    expect(Array.from(a)).toEqual([11, 22, 33]);
  });

  it('rejects mismatched lengths', () => {
    expect(() => residualAdd(new Float32Array(3), new Float32Array(2))).toThrow(/lengths/);
  });
});
