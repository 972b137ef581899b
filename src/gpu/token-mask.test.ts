// Parity of shaders/token_mask.wgsl with applyTokenMask, bit for bit: masked ids get MASKED_LOGIT,
// the others keep their logits, rows the step does not constrain are left alone. Node WebGPU (SwiftShader).
import { describe, expect, it } from 'vitest';
import { maskWords } from '../engine/constraints';
import { mulberry32 } from '../engine/seeded-random';
import { applyTokenMask } from '../reference/token-mask';
import { runKernel } from './testing/kernel-harness';
import { bits, seededFloats } from './testing/test-util';

describe('token_mask.wgsl', () => {
  it("writes the twin's logits bit for bit at the constrained positions and leaves the others alone", async () => {
    const vocab = 1000; // not a multiple of 32 or of the workgroup: tails on both
    const numPositions = 6;
    const constrained = [4, 0, 3]; // logits rows, in no order
    const words = maskWords(vocab);
    const random = mulberry32(21);
    const masks = Uint32Array.from({ length: constrained.length * words }, () => (random() < 0.2 ? 0xffffffff : (random() * 2 ** 32) >>> 0));
    masks.fill(0, words, 2 * words - 1); // one position allows only its last word's ids
    const logits = seededFloats(5, numPositions * vocab, 6); // [positions, vocab]
    const out = await runKernel(
      'token_mask',
      { WORKGROUP_SIZE: 256 },
      [new Uint32Array([constrained.length, vocab, words, 0]), logits, Uint32Array.from(constrained), masks],
      [Math.ceil(vocab / 256), constrained.length],
      [1],
    );
    const gpu = new Float32Array(out.get(1)!);
    const twin = logits.slice();
    const masks32 = new Int32Array(masks.buffer);
    constrained.forEach((row, m) => applyTokenMask(twin.subarray(row * vocab, (row + 1) * vocab), masks32, m));
    expect(bits(gpu)).toEqual(bits(twin));
    expect(bits(gpu.subarray(vocab, 3 * vocab))).toEqual(bits(logits.subarray(vocab, 3 * vocab))); // rows 1, 2 unconstrained
    expect(twin).not.toEqual(logits);
  });
});
