// repackForGpu: q8_0 and q4_0 blocks into a quant plane and a scale plane, every byte kept; other
// stored types untouched. The kernels' decoding of the planes is held to the twin in matmul/embedding tests.
import { describe, expect, it } from 'vitest';
import { repackForGpu, scalePlaneOffset } from './repack';

describe('repackForGpu', () => {
  it('moves each q8_0 block scale to the scale plane and its quants to the quant plane, in block order', () => {
    const rows = 3;
    const cols = 64; // 2 blocks a row
    const data = Uint8Array.from({ length: rows * 2 * 34 }, (_, i) => (i * 7 + 3) & 0xff);
    const out = repackForGpu(data, 'q8_0', rows, cols);
    expect(out.length).toBe(data.length);
    const scales = scalePlaneOffset('q8_0', rows, cols);
    expect(scales).toBe(rows * cols);
    for (let b = 0; b < rows * 2; b++) {
      expect(Array.from(out.subarray(scales + 2 * b, scales + 2 * b + 2))).toEqual(Array.from(data.subarray(b * 34, b * 34 + 2)));
      expect(Array.from(out.subarray(32 * b, 32 * b + 32))).toEqual(Array.from(data.subarray(b * 34 + 2, b * 34 + 34)));
    }
  });

  it('does the same for q4_0 (16 quant bytes a block) and leaves other types as stored', () => {
    const data = Uint8Array.from({ length: 4 * 18 }, (_, i) => i);
    const out = repackForGpu(data, 'q4_0', 2, 64);
    expect(scalePlaneOffset('q4_0', 2, 64)).toBe(64);
    expect(Array.from(out.subarray(16, 32))).toEqual(Array.from(data.subarray(20, 36)));
    expect(Array.from(out.subarray(66, 68))).toEqual(Array.from(data.subarray(18, 20)));
    const q4k = new Uint8Array(144).fill(9);
    expect(repackForGpu(q4k, 'q4_K', 1, 256)).toBe(q4k);
  });
});
