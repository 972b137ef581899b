// Parity of shaders/rms_norm.wgsl with rmsNorm: whole hidden vectors, qwen3's per-head vectors,
// the gathered last tokens before lm_head, and gemma's post-norm added into the residual
// (ADD_TO_OUT, rmsNorm then residualAdd); plus batch invariance. Node WebGPU.
import { describe, expect, it } from 'vitest';
import { residualAdd, rmsNorm } from '../reference/ops';
import { runKernel } from './testing/kernel-harness';
import { bits, scaledError, seededFloats } from './testing/test-util';

/** f32 sum of squares in tree order vs the twin's f64 sum. */
const RMS_NORM_TOLERANCE = 1e-5;
const EPS = 1e-5;

/** out0: the initial out, added to (ADD_TO_OUT) when given. */
async function normOnGpu(x: Float32Array, weight: Float32Array, numVecs: number, rowLen: number, rowIndex?: number[], out0?: Float32Array): Promise<Float32Array> {
  const params = new ArrayBuffer(16);
  new Uint32Array(params).set([numVecs, rowLen]);
  new Float32Array(params)[2] = EPS;
  const out = out0 ? Float32Array.from(out0) : new Float32Array(numVecs * rowLen); // [numVecs, rowLen]
  const result = await runKernel(
    'rms_norm',
    { WORKGROUP_SIZE: 64, GATHER_ROWS: rowIndex ? 1 : 0, ADD_TO_OUT: out0 ? 1 : 0 },
    [params, x, weight, Uint32Array.from(rowIndex ?? [0]), out],
    [numVecs],
    [4],
  );
  return new Float32Array(result.get(4)!);
}

function normOnCpu(x: Float32Array, weight: Float32Array, numVecs: number, rowLen: number): Float32Array {
  const out = new Float32Array(numVecs * rowLen);
  rmsNorm(x, weight, numVecs, rowLen, EPS, out);
  return out;
}

describe('rms_norm.wgsl', () => {
  it('normalizes hidden vectors like rmsNorm (rowLen not a multiple of the workgroup)', async () => {
    const rowLen = 200;
    const x = seededFloats(1, 6 * rowLen, 3);
    const weight = seededFloats(2, rowLen, 1.5);
    expect(scaledError(await normOnGpu(x, weight, 6, rowLen), normOnCpu(x, weight, 6, rowLen))).toBeLessThanOrEqual(RMS_NORM_TOLERANCE);
  });

  it('normalizes per-head vectors (qwen3 q/k norm) shorter than the workgroup', async () => {
    const headDim = 16;
    const numVecs = 5 * 4; // 5 tokens x 4 heads
    const x = seededFloats(3, numVecs * headDim);
    const weight = seededFloats(4, headDim);
    expect(scaledError(await normOnGpu(x, weight, numVecs, headDim), normOnCpu(x, weight, numVecs, headDim))).toBeLessThanOrEqual(RMS_NORM_TOLERANCE);
  });

  it('gathers the rows it normalizes when GATHER_ROWS is set', async () => {
    const rowLen = 64;
    const x = seededFloats(5, 7 * rowLen);
    const weight = seededFloats(6, rowLen);
    const picked = [6, 2, 3];
    const gathered = new Float32Array(picked.length * rowLen);
    picked.forEach((r, i) => gathered.set(x.subarray(r * rowLen, (r + 1) * rowLen), i * rowLen));
    const gpu = await normOnGpu(x, weight, picked.length, rowLen, picked);
    expect(scaledError(gpu, normOnCpu(gathered, weight, picked.length, rowLen))).toBeLessThanOrEqual(RMS_NORM_TOLERANCE);
  });

  it('adds the normed vectors into out with ADD_TO_OUT: rmsNorm then residualAdd, and bitwise its own plain norm then an f32 add', async () => {
    const rowLen = 200;
    const numVecs = 5;
    const x = seededFloats(10, numVecs * rowLen, 3); // [numVecs, rowLen] a sublayer's output
    const weight = seededFloats(11, rowLen, 1.5);
    const residual = seededFloats(12, numVecs * rowLen, 4); // [numVecs, rowLen]
    const added = await normOnGpu(x, weight, numVecs, rowLen, undefined, residual);
    const cpu = residualAdd(residual, normOnCpu(x, weight, numVecs, rowLen));
    expect(scaledError(added, cpu)).toBeLessThanOrEqual(RMS_NORM_TOLERANCE);
    // the fused add rounds the product first: the same bits as the unfused norm plus an f32 add
    const plain = await normOnGpu(x, weight, numVecs, rowLen);
    expect(bits(added)).toEqual(bits(residualAdd(residual, plain)));
  });

  it('gives a vector bitwise the same result alone and among 15 others', async () => {
    const rowLen = 96;
    const probe = seededFloats(7, rowLen, 2);
    const weight = seededFloats(8, rowLen);
    const alone = await normOnGpu(probe, weight, 1, rowLen);
    const x = seededFloats(9, 16 * rowLen, 5);
    x.set(probe, 11 * rowLen);
    const batched = await normOnGpu(x, weight, 16, rowLen);
    expect(bits(batched.slice(11 * rowLen, 12 * rowLen))).toEqual(bits(alone));
  });
});
