// Parity of matmul.wgsl (every stored dtype, one DTYPE override each) with the CPU twin
// matmulQuant, its split, GLU (SwiGLU, GeGLU) and soft-capped stores, and its batch invariance,
// in both kernel settings' shapes. Runs on Node WebGPU (SwiftShader here); says nothing about speed.
import { describe, expect, it } from 'vitest';
import { encodeTensor } from '../../tools/models/quantize';
import type { DType, MlpActivation, TensorDesc } from '../model/desc';
import { geglu, logitSoftcap, matmulQuant, rmsNorm, swiglu } from '../reference/ops';
import { runKernel } from './testing/kernel-harness';
import { repackForGpu } from './repack';
import { ACTIVATION_CODE, MATMUL_SHAPE, matmulGrid, matmulOverrides, type KernelSetting, type MatmulShape } from './kernels';
import { bits, scaledError, seededFloats } from './testing/test-util';

/** Max |gpu - cpu| / max |cpu|: f32 sums in a different order than the twin's f64 sums. */
const MATMUL_TOLERANCE = 1e-5;

const DTYPES: DType[] = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'];

function weightTensor(dtype: DType, rows: number, cols: number, seed: number): TensorDesc {
  const values = seededFloats(seed, rows * cols, 1 / Math.sqrt(cols));
  return { name: 'w', dtype, shape: [rows, cols], data: encodeTensor(values, cols, dtype) };
}

/** Stored bytes (repacked where the runner repacks them) padded to whole u32 words, as the runner uploads them. */
function wordBytes(data: Uint8Array): ArrayBuffer {
  const out = new Uint8Array(Math.ceil(data.byteLength / 16) * 16 + 16);
  out.set(data);
  return out.buffer;
}

interface MatmulRun {
  x: Float32Array;
  numTokens: number;
  w: TensorDesc;
  bias?: Float32Array;
  /** Initial y, added to when given (ACCUMULATE). */
  y0?: Float32Array;
  /** Rows from which outputs go to y2 and y3 (default: none). */
  splits?: [number, number];
  glu?: boolean;
  /** The GLU store's gate activation (default silu). */
  activation?: MlpActivation;
  /** > 0: stores softcap * tanh(value / softcap). */
  softcap?: number;
  /** NORM_INPUT: x is multiplied as RMSNorm(x) with these weights [k] and epsilon. */
  norm?: { weight: Float32Array; eps: number };
  /** Workgroups launched (default matmulGrid's): another grid over the same row groups must give the same bits. */
  grid?: [number, number];
}

/** y, y2 and y3 after one matmul dispatch. */
async function matmulOutputs(shape: MatmulShape, { x, numTokens, w, bias, y0, splits, glu, activation, softcap = 0, norm, grid: forced }: MatmulRun): Promise<Float32Array[]> {
  const [n, k] = w.shape as [number, number];
  const [splitA, splitB] = splits ?? [n, n];
  const y = y0 ? Float32Array.from(y0) : new Float32Array(numTokens * (glu ? n / 2 : splitA)); // [numTokens, splitA]
  const grid: [number, number] = [0, 0];
  matmulGrid(n, numTokens, shape, grid);
  const params = new Uint32Array([numTokens, n, k, splitA, splitB, 0, 0, 0]);
  new Float32Array(params.buffer)[5] = softcap;
  new Float32Array(params.buffer)[6] = norm?.eps ?? 0;
  const result = await runKernel(
    'matmul',
    matmulOverrides(w.dtype, shape, { hasBias: bias !== undefined, accumulate: y0 !== undefined, glu, activation, normInput: norm !== undefined }),
    [params, x, wordBytes(repackForGpu(w.data, w.dtype, n, k)), bias ?? new Float32Array(4), y, new Float32Array(numTokens * (splitB - splitA)), new Float32Array(numTokens * (n - splitB)), norm?.weight ?? new Float32Array(4)],
    forced ?? grid,
    [4, 5, 6],
  );
  return [4, 5, 6].map((b) => new Float32Array(result.get(b)!));
}



/** Rows [from, to) of w as a tensor of their own. */
function rowsOf(w: TensorDesc, from: number, to: number): TensorDesc {
  const stride = w.data.byteLength / w.shape[0]!;
  return { ...w, shape: [to - from, w.shape[1]!], data: w.data.subarray(from * stride, to * stride) };
}

function matmulOnCpu({ x, numTokens, w, bias, y0 }: MatmulRun): Float32Array {
  const out = new Float32Array(numTokens * w.shape[0]);
  matmulQuant(x, numTokens, w, bias ?? null, out);
  if (y0) for (let i = 0; i < out.length; i++) out[i] = Math.fround(y0[i] + out[i]);
  return out;
}

/** Columns per dtype: several blocks, and an odd block count where blocks are 2-byte aligned. */
function colsFor(dtype: DType): number {
  if (dtype === 'q4_K' || dtype === 'q6_K') return 512;
  if (dtype === 'q8_0' || dtype === 'q4_0') return 96;
  return 100;
}

describe.each(['gpu', 'cpu'] as KernelSetting[])('matmul.wgsl, %s shape', (setting) => {
  const shape = MATMUL_SHAPE[setting];
  const matmulOnGpu = async (run: MatmulRun) => (await matmulOutputs(shape, run))[0]!;

  for (const dtype of DTYPES) {
    it(`${dtype}: matches matmulQuant on ragged shapes`, async () => {
      const k = colsFor(dtype);
      const numTokens = 11; // one full tile of 8 and a ragged tile of 3
      const w = weightTensor(dtype, 37, k, 7); // 37 rows: a ragged group of 4
      const x = seededFloats(3, numTokens * k);
      const run = { x, numTokens, w };
      expect(scaledError(await matmulOnGpu(run), matmulOnCpu(run))).toBeLessThanOrEqual(MATMUL_TOLERANCE);
    });
  }

  it('adds the bias and accumulates into y', async () => {
    const w = weightTensor('q8_0', 21, 64, 5);
    const numTokens = 3;
    const run = { x: seededFloats(9, numTokens * 64), numTokens, w, bias: seededFloats(4, 21), y0: seededFloats(6, numTokens * 21, 4) };
    expect(scaledError(await matmulOnGpu(run), matmulOnCpu(run))).toBeLessThanOrEqual(MATMUL_TOLERANCE);
  });

  // q, k and v from one matrix: rows split 20 / 8 / 9 (a ragged row group straddles each split)
  for (const dtype of ['f32', 'q4_0'] as DType[]) {
    it(`${dtype}: a split store gives each part bitwise what its own matmul gives`, async () => {
      const k = colsFor(dtype);
      const numTokens = 11;
      const w = weightTensor(dtype, 37, k, 17);
      const bias = seededFloats(18, 37);
      const x = seededFloats(19, numTokens * k);
      const [y, y2, y3] = await matmulOutputs(shape, { x, numTokens, w, bias, splits: [20, 28] });
      const parts: Array<[number, number, Float32Array]> = [[0, 20, y!], [20, 28, y2!], [28, 37, y3!]];
      for (const [from, to, got] of parts) {
        const alone = await matmulOnGpu({ x, numTokens, w: rowsOf(w, from, to), bias: bias.slice(from, to) });
        expect(bits(got)).toEqual(bits(alone));
      }
    });
  }

  // gate_proj and up_proj interleaved row by row, stored as act(gate) * up: SwiGLU, and GeGLU (gemma)
  const gluCases: Array<[DType, MlpActivation]> = [['f32', 'silu'], ['q8_0', 'silu'], ['q4_K', 'silu'], ['f32', 'gelu_tanh'], ['q4_K', 'gelu_tanh']];
  for (const [dtype, activation] of gluCases) {
    it(`${dtype}: the GLU store with ${activation} equals gate and up matmuls then ${activation === 'silu' ? 'SwiGLU' : 'GeGLU'}`, async () => {
      const k = colsFor(dtype);
      const numTokens = 11;
      const intermediate = 19; // odd: the last row group holds one pair
      const gate = weightTensor(dtype, intermediate, k, 23);
      const up = weightTensor(dtype, intermediate, k, 24);
      const stride = gate.data.byteLength / intermediate;
      const data = new Uint8Array(2 * gate.data.byteLength);
      for (let i = 0; i < intermediate; i++) {
        data.set(gate.data.subarray(i * stride, (i + 1) * stride), 2 * i * stride);
        data.set(up.data.subarray(i * stride, (i + 1) * stride), (2 * i + 1) * stride);
      }
      const x = seededFloats(25, numTokens * k);
      const fused = await matmulOnGpu({ x, numTokens, w: { ...gate, shape: [2 * intermediate, k], data }, glu: true, activation });
      const g = await matmulOnGpu({ x, numTokens, w: gate });
      const u = await matmulOnGpu({ x, numTokens, w: up });
      const gated = { ACTIVATION: ACTIVATION_CODE[activation] };
      const onGpu = (await runKernel('swiglu', gated, [new Uint32Array([g.length, 0, 0, 0]), g, u, new Float32Array(g.length)], [Math.ceil(g.length / 64)], [3])).get(3)!;
      expect(bits(fused)).toEqual(bits(new Float32Array(onGpu)));
      const cpu = new Float32Array(g.length);
      (activation === 'silu' ? swiglu : geglu)(matmulOnCpu({ x, numTokens, w: gate }), matmulOnCpu({ x, numTokens, w: up }), g.length, cpu);
      expect(scaledError(fused, cpu)).toBeLessThanOrEqual(MATMUL_TOLERANCE);
    });
  }

  // gemma2's final logits: lm_head's store soft-capped, as matmulQuant then logitSoftcap
  for (const dtype of ['f32', 'q8_0'] as DType[]) {
    it(`${dtype}: the soft-capped store equals matmulQuant then logitSoftcap`, async () => {
      const k = colsFor(dtype);
      const numTokens = 11;
      const w = weightTensor(dtype, 37, k, 27);
      const x = seededFloats(28, numTokens * k, 40); // values of several caps, out to tanh's flat ends
      const capped = await matmulOnGpu({ x, numTokens, w, softcap: 3 });
      const cpu = matmulOnCpu({ x, numTokens, w });
      expect(Math.max(...cpu.map(Math.abs))).toBeGreaterThan(3 * 3); // the cap bites
      logitSoftcap(cpu, 3);
      expect(scaledError(capped, cpu)).toBeLessThanOrEqual(MATMUL_TOLERANCE);
    });
  }

  for (const dtype of ['f32', 'q6_K'] as DType[]) {
    it(`${dtype}: a token's outputs are bitwise the same alone and in cohorts of 2, 5, 8, 16`, async () => {
      const k = colsFor(dtype);
      const n = 45;
      const w = weightTensor(dtype, n, k, 13);
      const probe = seededFloats(21, k);
      const alone = await matmulOnGpu({ x: probe, numTokens: 1, w });
      for (const cohort of [2, 5, 8, 16]) {
        const x = seededFloats(100 + cohort, cohort * k, 2);
        const at = cohort - 1 - (cohort >> 1); // never the first slot of a tile only
        x.set(probe, at * k);
        const y = await matmulOnGpu({ x, numTokens: cohort, w });
        expect(bits(y.slice(at * n, (at + 1) * n))).toEqual(bits(alone));
      }
    });
  }

  // K long enough that every lane of a row group takes several units, in each unit size
  for (const [dtype, k] of [['f32', 1032], ['q8_0', 2080], ['q4_K', 4352], ['q6_K', 2304]] as Array<[DType, number]>) {
    it(`${dtype}: matches matmulQuant over K = ${k}`, async () => {
      const numTokens = 3;
      const w = weightTensor(dtype, 9, k, 41);
      const run = { x: seededFloats(42, numTokens * k), numTokens, w };
      expect(scaledError(await matmulOnGpu(run), matmulOnCpu(run))).toBeLessThanOrEqual(MATMUL_TOLERANCE);
    });
  }

  it('row groups folded from x into y (a grid past 65535 workgroups) give the same bits', async () => {
    const k = 64;
    const numTokens = 11; // two token tiles
    const n = 203;
    const w = weightTensor('f32', n, k, 43);
    const x = seededFloats(44, numTokens * k);
    const grid: [number, number] = [0, 0];
    matmulGrid(n, numTokens, shape, grid);
    const folded: [number, number] = [Math.ceil(grid[0] / 3), 2 * 3]; // 3 chunks of x per token tile
    expect(folded[0] * 3).toBeGreaterThanOrEqual(grid[0]);
    expect(bits(await matmulOnGpu({ x, numTokens, w, grid: folded }))).toEqual(bits(await matmulOnGpu({ x, numTokens, w })));
  });

  // the RMSNorm before q/k/v and the MLP, folded into the matmul: what rms_norm.wgsl writes, bit for bit
  for (const dtype of ['f32', 'q4_K'] as DType[]) {
    it(`${dtype}: NORM_INPUT gives bitwise rms_norm then matmul, within tolerance of rmsNorm then matmulQuant`, async () => {
      const k = dtype === 'q4_K' ? 512 : 200;
      const numTokens = 11;
      const w = weightTensor(dtype, 37, k, 51);
      const x = seededFloats(52, numTokens * k, 3);
      const norm = { weight: seededFloats(53, k, 2), eps: 1e-5 };
      const fused = await matmulOnGpu({ x, numTokens, w, norm });
      const normParams = new Uint32Array([numTokens, k, 0, 0]);
      new Float32Array(normParams.buffer)[2] = norm.eps;
      const normed = new Float32Array((await runKernel('rms_norm', { WORKGROUP_SIZE: 64 }, [normParams, x, norm.weight, new Uint32Array(4), new Float32Array(numTokens * k)], [numTokens], [4])).get(4)!);
      expect(bits(fused)).toEqual(bits(await matmulOnGpu({ x: normed, numTokens, w })));
      const cpuNormed = new Float32Array(numTokens * k);
      rmsNorm(x, norm.weight, numTokens, k, norm.eps, cpuNormed);
      expect(scaledError(fused, matmulOnCpu({ x: cpuNormed, numTokens, w }))).toBeLessThanOrEqual(MATMUL_TOLERANCE);
    });
  }

  it('NORM_INPUT: a token alone and in a cohort of 13 gets the same bits', async () => {
    const k = 200;
    const w = weightTensor('f32', 29, k, 55);
    const norm = { weight: seededFloats(56, k), eps: 1e-6 };
    const probe = seededFloats(57, k, 2);
    const x = seededFloats(58, 13 * k, 2);
    x.set(probe, 9 * k);
    const alone = await matmulOnGpu({ x: probe, numTokens: 1, w, norm });
    expect(bits((await matmulOnGpu({ x, numTokens: 13, w, norm })).slice(9 * 29, 10 * 29))).toEqual(bits(alone));
  });
});


describe('matmulGrid', () => {
  it('launches every row group once, folding x into y past 65535 workgroups', () => {
    const out = [0, 0];
    matmulGrid(3072, 1, MATMUL_SHAPE.gpu, out);
    expect(out).toEqual([384, 1]); // 8 rows a workgroup
    matmulGrid(3072, 9, MATMUL_SHAPE.cpu, out);
    expect(out).toEqual([12, 2]); // 256 rows a workgroup
    matmulGrid(4 * 64 * 70000, 17, MATMUL_SHAPE.cpu, out);
    expect(out).toEqual([65535, 3 * 2]);
    matmulGrid(100, 0, MATMUL_SHAPE.gpu, out);
    expect(out[1]).toBe(0); // nothing to run
  });
});
