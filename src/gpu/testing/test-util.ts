// Test-only helpers for the kernel parity tests: seeded data, error measures, bit comparison.
// Not imported by product code.
import { fmix32 } from '../../engine/rng';

/** [n] deterministic uniform floats in [-scale, scale). */
export function seededFloats(seed: number, n: number, scale = 1): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (fmix32((seed ^ Math.imul(i + 1, 0x9e3779b9)) >>> 0) / 2 ** 31 - 1) * scale;
  return out;
}

/** Largest |gpu - cpu| divided by the largest |cpu|: error relative to the output's scale. */
export function scaledError(gpu: ArrayLike<number>, cpu: ArrayLike<number>): number {
  if (gpu.length !== cpu.length) throw new Error(`length ${gpu.length} != ${cpu.length}`);
  let maxDiff = 0;
  let maxRef = 0;
  for (let i = 0; i < cpu.length; i++) {
    const diff = Math.abs(gpu[i] - cpu[i]);
    if (Number.isNaN(diff)) return Infinity;
    maxDiff = Math.max(maxDiff, diff);
    maxRef = Math.max(maxRef, Math.abs(cpu[i]));
  }
  return maxDiff / Math.max(maxRef, 1e-30);
}

/** The f32 bit patterns of a float array, for exact (bitwise) comparisons. */
export function bits(values: Float32Array): Uint32Array {
  return new Uint32Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
}
