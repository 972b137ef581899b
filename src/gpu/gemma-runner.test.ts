// GpuRunner against CpuRunner on synthetic gemma2 and gemma3 models (src/model/testing/synthetic-model-fixtures.ts: a
// 16-key sliding window on every other layer, soft-capped scores and logits on gemma2, gemma3's
// q/k norms and per-layer RoPE bases, GeGLU, post-norms, tied embeddings), over prompts that cross
// the window, in cohorts, and split-KV decode; plus a row's logits bitwise alone and in a cohort,
// and however its prompt was chunked. Not the kernels' parity (their own tests) nor llama's runs.
import { describe, expect, it } from 'vitest';
import { SYNTH_SLIDING_WINDOW, syntheticModelDesc, type SynthDims } from '../model/testing/synthetic-model-fixtures';
import type { Arch, ModelDesc } from '../model/desc';
import { CpuRunner } from '../reference/cpu-runner';
import type { GpuRunnerOptions } from './gpu-runner';
import { executeDetailed } from './testing/step-probe';
import { StepDriver, drivenSession, greedy, type DrivenSession } from './testing/step-driver';
import { BLOCK_SIZE, compareRunners as compareBoth, LOGITS_MAX_ABS_DIFF, promptOf, testGpuRunner } from './testing/runner-fixtures';
import { bits } from './testing/test-util';

/** Three layers: sliding, global, sliding (the synthetic models' period of 2). */
const DIMS: Partial<SynthDims> = { hidden: 64, intermediate: 128, layers: 3, heads: 4, kvHeads: 2, headDim: 16, vocab: 97 };
const GEMMAS: Arch[] = ['gemma2', 'gemma3'];

function gemmaModel(arch: Arch, dims: Partial<SynthDims> = DIMS, tieWordEmbeddings = true): ModelDesc {
  return syntheticModelDesc({ arch, dims, seed: 11, tieWordEmbeddings });
}

const gpuRunner = testGpuRunner;

/** Runs both runners on the same plans (driven by the CPU's tokens); returns the worst logits gap. */
async function compareRunners(model: ModelDesc, sessions: DrivenSession[], numSteps: number, chunkSize: number, options: Partial<GpuRunnerOptions> = {}): Promise<number> {
  // GpuRunner's sliding layers in a KV cache group of their own (the driver's tables give blocks back
  // and reuse them at once), the CPU oracle's in its one group (the window only masks)
  const cpu = new CpuRunner(model, { blockSize: BLOCK_SIZE, numBlocks: 64, windowKv: false });
  const gpu = await gpuRunner(model, options);
  expect(gpu.kvGroups.map((group) => group.window !== null)).toEqual([false, true]);
  return compareBoth(cpu, gpu, sessions, numSteps, chunkSize);
}

/** A row's logits at every step it samples, stepping `sessions` on a fresh runner. */
async function logitsOf(model: ModelDesc, sessions: DrivenSession[], id: string, numSteps: number, chunkSize: number): Promise<Float32Array[]> {
  const vocab = model.config.vocabSize;
  const gpu = await gpuRunner(model);
  const driver = new StepDriver(sessions, BLOCK_SIZE, chunkSize, gpu.kvGroups);
  const logits: Float32Array[] = [];
  try {
    for (let step = 0; step < numSteps; step++) {
      const plan = driver.nextPlan();
      const result = await executeDetailed(gpu, plan);
      const i = result.sampleRows.findIndex((r) => plan.rows[r]!.sessionId === id);
      if (i >= 0) logits.push(result.logits.slice(i * vocab, (i + 1) * vocab));
      driver.update(plan, result);
    }
  } finally {
    gpu.dispose();
  }
  return logits;
}

describe('GpuRunner vs CpuRunner on gemma', () => {
  it('the synthetic models exercise what gemma adds', () => {
    const g2 = gemmaModel('gemma2').config;
    const g3 = gemmaModel('gemma3').config;
    expect(g2.layerWindows).toEqual([SYNTH_SLIDING_WINDOW, 0, SYNTH_SLIDING_WINDOW]);
    expect([g2.attnLogitSoftcap > 0, g2.finalLogitSoftcap > 0, g2.postNorms, g2.mlpActivation, g2.embedScale !== 1]).toEqual([true, true, true, 'gelu_tanh', true]);
    expect([g3.qkNorm, g3.slidingRopeTheta !== null && g3.slidingRopeTheta !== g3.ropeTheta, g3.ropeScaling?.type]).toEqual([true, true, 'linear']);
  });

  for (const arch of GEMMAS) {
    it(`${arch}: greedy tokens identical for 48 steps, 4 rows joining and leaving, prompts crossing the window`, async () => {
      const model = gemmaModel(arch);
      const vocab = model.config.vocabSize;
      const sessions = [
        drivenSession('a', promptOf(1, 50, vocab), greedy()), // four 16-token chunks, then 45 decode steps past the window
        drivenSession('b', promptOf(2, 5, vocab), greedy(), 1),
        drivenSession('c', promptOf(3, 23, vocab), greedy(), 4, 30),
        drivenSession('d', promptOf(4, 37, vocab), greedy(), 20),
      ];
      expect(await compareRunners(model, sessions, 48, 16)).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
    });
  }

  it('gemma3 at headDim 256 (Gemma 3 270M/1B, Gemma 2 2B): greedy tokens identical', async () => {
    const model = gemmaModel('gemma3', { hidden: 64, intermediate: 128, layers: 2, heads: 2, kvHeads: 1, headDim: 256, vocab: 97 });
    const vocab = model.config.vocabSize;
    const sessions = [drivenSession('a', promptOf(5, 30, vocab), greedy()), drivenSession('b', promptOf(6, 4, vocab), greedy(), 1)];
    expect(await compareRunners(model, sessions, 12, 16)).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
  });

  for (const kernels of ['cpu', 'gpu'] as const) {
    it(`gemma2, ${kernels} kernels: rows past 512 keys on window layers (split over workgroups in the gpu setting): tokens the CPU oracle's`, async () => {
      const model = gemmaModel('gemma2', { ...DIMS, layers: 2 });
      const vocab = model.config.vocabSize;
      const sessions = [drivenSession('long', promptOf(3, 530, vocab), greedy()), drivenSession('short', promptOf(4, 20, vocab), greedy(), 3)];
      expect(await compareRunners(model, sessions, 14, 64, { maxContext: 1024, numBlocks: 64, maxTokensPerStep: 128, kernels })).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
    });
  }

  it('binds one buffer for the tied embedding and lm_head', async () => {
    const tied = await gpuRunner(gemmaModel('gemma2'));
    const untied = await gpuRunner(gemmaModel('gemma2', DIMS, false));
    try {
      const { vocab, hidden } = { vocab: DIMS.vocab!, hidden: DIMS.hidden! };
      expect(untied.memory.weights - tied.memory.weights).toBeGreaterThanOrEqual(4 * vocab * hidden); // one [vocab, hidden] f32 matrix fewer
    } finally {
      tied.dispose();
      untied.dispose();
    }
  });
});

describe.each(GEMMAS)('GpuRunner cohorts on %s', (arch) => {
  it("a row's logits are bitwise the same alone and in a changing cohort of up to 6 rows", async () => {
    const model = gemmaModel(arch);
    const vocab = model.config.vocabSize;
    const probe = () => drivenSession('probe', promptOf(9, 21, vocab), greedy());
    const alone = await logitsOf(model, [probe()], 'probe', 30, 8);
    const cohort = [
      drivenSession('x', promptOf(10, 30, vocab), { temperature: 1, topK: 0, topP: 1, seed: 8 }),
      drivenSession('y', promptOf(11, 2, vocab), greedy(), 4, 15),
      probe(),
      drivenSession('z', promptOf(12, 7, vocab), { temperature: 0.7, topK: 5, topP: 0.9, seed: 9 }, 6),
      ...Array.from({ length: 2 }, (_, i) => drivenSession(`w${i}`, promptOf(20 + i, 3 + 9 * i, vocab), greedy(), 2 * i + 1)),
    ];
    const batched = await logitsOf(model, cohort, 'probe', 30, 8);
    expect(batched.length).toBe(alone.length);
    expect(alone.length).toBeGreaterThan(20); // decoding well past the window
    alone.forEach((l, step) => expect(bits(batched[step]!), `step ${step}`).toEqual(bits(l)));
  });

  it("a row's logits are bitwise the same however its prompt is chunked", async () => {
    const model = gemmaModel(arch);
    const prompt = promptOf(13, 45, model.config.vocabSize);
    const whole = await logitsOf(model, [drivenSession('a', prompt, greedy())], 'a', 8, 64);
    for (const chunkSize of [7, 16]) {
      const steps = Math.ceil(45 / chunkSize) + 7; // the same 8 samples: the prompt's last chunk, then 7 decodes
      const chunked = await logitsOf(model, [drivenSession('a', prompt, greedy())], 'a', steps, chunkSize);
      expect(chunked.length).toBe(whole.length);
      chunked.forEach((l, i) => expect(bits(l), `chunks of ${chunkSize}, sample ${i}`).toEqual(bits(whole[i]!)));
    }
  });
});
