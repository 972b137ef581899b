// GpuRunner against CpuRunner on synthetic llama, qwen2 and qwen3 models (HF f32 and GGUF
// quantized), per KV storage type, and the cohort properties: a row's logits and draws do not
// depend on its neighbours, nor on how its prompt was chunked.
import { describe, expect, it } from 'vitest';
import { hfToGguf } from '../../tools/models/hf-to-gguf';
import { encodeTensor } from '../../tools/models/quantize';
import { hfFiles, syntheticModel, type SynthDims } from '../model/testing/synthetic-model-fixtures';
import type { Arch, DType, ModelDesc } from '../model/desc';
import { DEFAULT_KV_CACHE_TYPE, KV_CACHE_TYPES, kvValueBytes, type KvCacheType } from '../engine/kv-types';
import { bytesSource, mapOpener } from '../model/byte-source';
import { loadGgufModel } from '../model/gguf-loader';
import { loadHfModel } from '../model/hf-loader';
import { fileURLToPath } from 'node:url';
import { folderOpener } from '../../tools/models/node-files';
import { CpuRunner } from '../reference/cpu-runner';
import { DEFAULT_MAX_ROWS } from '../engine/types';
import { maxPenaltyEntriesPerRow } from '../engine/penalties';
import { PENALTY_ENTRY_WORDS } from './step-meta';
import type { KernelSetting } from './kernels';
import { GpuRunner, type GpuRunnerOptions } from './gpu-runner';
import { testPipelineCache } from './testing/kernel-harness';
import { kernelSettingFromEnv, loadShader } from './testing/node-gpu';
import { executeDetailed, profileStep } from './testing/step-probe';
import { StepDriver, drivenSession, greedy, type DrivenSession } from './testing/step-driver';
import { BLOCK_SIZE, compareRunners as compareBoth, LOGITS_MAX_ABS_DIFF, maxAbsDiff, promptOf, stepLogitsAndLabels, testGpuRunner } from './testing/runner-fixtures';
import { bits } from './testing/test-util';
import { SAMPLE_HIST_WORDS, samplerShape } from './sample-plan';

const SMALL_DIMS: Partial<SynthDims> = { hidden: 64, intermediate: 128, heads: 4, kvHeads: 2, headDim: 16, vocab: 97 };

async function hfModel(arch: Arch, dims: Partial<SynthDims>): Promise<ModelDesc> {
  return loadHfModel(mapOpener(hfFiles(syntheticModel({ arch, dims, seed: 3 }), 'f32')), { source: `synthetic-${arch}` });
}

async function ggufModel(arch: Arch, dtype: DType): Promise<ModelDesc> {
  const bytes = hfToGguf(syntheticModel({ arch, seed: 5, dims: { layers: 1 } }), dtype);
  return (await loadGgufModel(bytesSource(`synthetic-${arch}-${dtype}.gguf`, bytes))).desc;
}

const gpuRunner = testGpuRunner;

/** Both kernel settings run on any adapter: each is held to the oracle and to invariance here. */
// Tests that force each setting themselves run once, in the unit project: the gpu-kernels project
// (COHORT_KERNELS=gpu) would only repeat them.
const KERNEL_SETTINGS: readonly KernelSetting[] = kernelSettingFromEnv() === undefined ? ['cpu', 'gpu'] : [];

/** Runs both runners on the same plans (driven by the CPU's tokens); returns the worst logits gap. */
async function compareRunners(model: ModelDesc, sessions: () => DrivenSession[], numSteps: number, chunkSize: number, options: Partial<GpuRunnerOptions> = {}): Promise<number> {
  const cpu = new CpuRunner(model, { blockSize: BLOCK_SIZE, numBlocks: 64, ...(options.kvCacheType ? { kvCacheType: options.kvCacheType } : {}) });
  const gpu = await gpuRunner(model, options);
  expect(gpu.kvCacheType).toBe(cpu.kvCacheType);
  return compareBoth(cpu, gpu, sessions(), numSteps, chunkSize);
}

describe('GpuRunner vs CpuRunner', () => {
  for (const arch of ['llama', 'qwen2', 'qwen3'] as Arch[]) {
    it(`${arch}: greedy tokens identical for 64 steps with rows joining, chunked prefill and decode`, async () => {
      const model = await hfModel(arch, SMALL_DIMS);
      const vocab = model.config.vocabSize;
      const sessions = () => [
        drivenSession('a', promptOf(1, 5, vocab), greedy()),
        drivenSession('b', promptOf(2, 40, vocab), greedy(), 3), // three 16-token chunks while a decodes
        drivenSession('c', promptOf(3, 1, vocab), greedy(), 10, 40), // leaves at step 40
        drivenSession('d', promptOf(4, 20, vocab), greedy(), 41),
      ];
      const worst = await compareRunners(model, sessions, 64, 16);
      expect(worst).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
    });
  }

  // as in Q4_K_M files, v_proj and up_proj stored unlike their neighbours: q and k fuse, v runs
  // alone, and gate and up run apart with a swiglu dispatch instead of the GLU store
  it('qwen2 with mixed dtypes (v_proj, up_proj in q8_0): greedy tokens identical through the unfused paths', async () => {
    const model = await hfModel('qwen2', SMALL_DIMS);
    for (const [name, t] of model.tensors) {
      if (!/(v_proj|up_proj)\.weight$/.test(name)) continue;
      const values = new Float32Array(t.data.slice().buffer);
      model.tensors.set(name, { ...t, dtype: 'q8_0', data: encodeTensor(values, t.shape[1]!, 'q8_0') });
    }
    const gpu = await gpuRunner(model);
    try {
      expect(gpu.dispatchLabels).toEqual(expect.arrayContaining(['L0.qk_proj', 'L0.v_proj', 'L0.gate_proj', 'L0.up_proj', 'L0.swiglu']));
    } finally {
      gpu.dispose();
    }
    const vocab = model.config.vocabSize;
    const sessions = () => [drivenSession('a', promptOf(7, 9, vocab), greedy()), drivenSession('b', promptOf(8, 20, vocab), greedy(), 2)];
    expect(await compareRunners(model, sessions, 16, 8)).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
  });

  for (const dtype of ['q8_0', 'q4_0', 'q4_K', 'q6_K', 'f16', 'bf16'] as DType[]) {
    it(`GGUF ${dtype} llama: greedy tokens identical for 12 steps`, async () => {
      const model = await ggufModel('llama', dtype);
      const vocab = model.config.vocabSize;
      const sessions = () => [drivenSession('a', promptOf(5, 9, vocab), greedy()), drivenSession('b', promptOf(6, 3, vocab), greedy(), 2)];
      const worst = await compareRunners(model, sessions, 12, 8);
      expect(worst).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
    });
  }
});

describe('GpuRunner vs CpuRunner on the embedded model', () => {
  it('cohort-tiny: greedy tokens identical for 64 steps on NIAH-style prompts joining at different steps', async () => {
    const model = await loadHfModel(folderOpener(fileURLToPath(new URL('../../public/models/cohort-tiny/', import.meta.url))), { source: 'cohort-tiny' });
    const bytes = (text: string) => Array.from(new TextEncoder().encode(text));
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `Note ${String(i).padStart(4, '0')}: this paragraph is unrelated padding and does not contain the answer.`);
    const niah = (n: number, code: string) => bytes([...lines(n), '', `IMPORTANT: the secret code is ${code}.`, '', ...lines(1), 'Question: what is the secret code? Answer:'].join('\n'));
    const sessions = () => [drivenSession('a', niah(2, 'MAPLE-7890'), greedy()), drivenSession('b', niah(1, 'OAK-1234'), greedy(), 5)];
    const worst = await compareRunners(model, sessions, 64, 32); // two rows of 32-token chunks fit the 64-token steps
    expect(worst).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
  });
});

describe.each(KV_CACHE_TYPES)('GpuRunner vs CpuRunner, %s KV', (kvCacheType) => {
  it('llama: greedy tokens identical for 40 steps with rows joining, chunked prefill and decode; the pool at its bytes per token', async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, layers: 2 });
    const vocab = model.config.vocabSize;
    const sessions = () => [
      drivenSession('a', promptOf(1, 5, vocab), greedy()),
      drivenSession('b', promptOf(2, 40, vocab), greedy(), 3),
      drivenSession('c', promptOf(3, 1, vocab), greedy(), 10, 30),
    ];
    expect(await compareRunners(model, sessions, 40, 16, { kvCacheType })).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
    const gpu = await gpuRunner(model, { kvCacheType });
    expect(gpu.memory.kv).toBe(2 * 2 * 64 * BLOCK_SIZE * kvValueBytes(kvCacheType, 2 * 16)); // 2 layers, K + V, 64 blocks
    gpu.dispose();
  });

  it.each(KERNEL_SETTINGS)("%s kernels, a row past 512 keys (split over workgroups in the gpu setting): tokens the CPU oracle's", async (kernels) => {
    const model = await hfModel('llama', { ...SMALL_DIMS, layers: 1 });
    const vocab = model.config.vocabSize;
    const sessions = () => [drivenSession('long', promptOf(3, 530, vocab), greedy()), drivenSession('short', promptOf(4, 20, vocab), greedy(), 3)];
    const options = { maxContext: 1024, numBlocks: 64, maxTokensPerStep: 128, kernels, kvCacheType };
    expect(await compareRunners(model, sessions, 14, 64, options)).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
  });
});

describe('GpuRunner KV storage type', () => {
  it('stores f16 by default and refuses a type the model cannot store, before allocating', async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, headDim: 8 }); // numKvHeads * headDim = 16
    const gpu = await gpuRunner(model);
    expect(gpu.kvCacheType).toBe('f16');
    gpu.dispose();
    await expect(gpuRunner(model, { kvCacheType: 'q8_0' })).rejects.toThrow(/kvCacheType q8_0: .*multiple of 32/);
  });
});

describe('GpuRunner buffer sizing', () => {
  it("defaults to the engine's row cap and 8 drafts a row, with a sampled position for each row and draft", async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, vocab: 4096 });
    const vocabBytes = 4 * model.config.vocabSize;
    const sized = { maxTokensPerStep: 512 }; // room for every row's drafts
    const byDefault = await gpuRunner(model, { ...sized, maxRows: undefined, maxDraftTokens: undefined });
    expect(byDefault.maxRows).toBe(DEFAULT_MAX_ROWS);
    expect(byDefault.maxDraftTokens).toBe(8);
    const runners = [byDefault];
    const activations = async (options: Partial<GpuRunnerOptions>) => {
      const runner = await gpuRunner(model, { ...sized, ...options });
      runners.push(runner);
      return runner.memory.activations;
    };
    try {
      // A sampled position costs its logits and its sampling weights ([vocab] f32 each), the
      // sampler's state and radix counts (a fixed size whatever the vocabulary) plus a few small
      // entries (a constraint's token mask: a bit per id): no third [vocab] for a logits readback
      // (testing/step-probe.ts makes its own).
      // A row also holds room for its penalty entries (16 bytes an id it may penalize).
      const samplerBytes = 4 * (SAMPLE_HIST_WORDS + samplerShape(model.config.vocabSize, byDefault.kernelSetting).stateWords);
      const penaltyBytes = 4 * PENALTY_ENTRY_WORDS * maxPenaltyEntriesPerRow(model.config.vocabSize, byDefault.maxContext);
      const perPlainRow = (await activations({ maxRows: 9, maxDraftTokens: 0 })) - (await activations({ maxRows: 8, maxDraftTokens: 0 }));
      expect(perPlainRow).toBeGreaterThanOrEqual(2 * vocabBytes + samplerBytes + penaltyBytes);
      expect(perPlainRow).toBeLessThan(3 * vocabBytes + samplerBytes + penaltyBytes);
      const perDraft = ((await activations({ maxRows: 8, maxDraftTokens: 2 })) - (await activations({ maxRows: 8, maxDraftTokens: 0 }))) / (8 * 2);
      expect(perDraft).toBeGreaterThanOrEqual(2 * vocabBytes + samplerBytes);
      expect(perDraft).toBeLessThan(3 * vocabBytes + samplerBytes);
    } finally {
      for (const runner of runners) runner.dispose();
    }
  });
});

describe('GpuRunner KV pool', () => {
  it('spreads layers over several buffers when one buffer cannot hold them all', async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, layers: 3 });
    const layerBytes = 2 * 64 * BLOCK_SIZE * kvValueBytes(DEFAULT_KV_CACHE_TYPE, 2 * 16); // K + V of 64 blocks, kvDim 32
    const probe = await gpuRunner(model, { maxKvBufferBytes: 2 * layerBytes });
    expect(probe.memory.kvBuffers).toBe(2); // layers 0-1, then layer 2
    probe.dispose();
    const vocab = model.config.vocabSize;
    const sessions = () => [drivenSession('a', promptOf(7, 21, vocab), greedy()), drivenSession('b', promptOf(8, 4, vocab), greedy(), 1)];
    const worst = await compareRunners(model, sessions, 10, 16, { maxKvBufferBytes: 2 * layerBytes });
    expect(worst).toBeLessThanOrEqual(LOGITS_MAX_ABS_DIFF);
  });
});

describe.each(KERNEL_SETTINGS)('GpuRunner cohorts, %s kernels', (kernels) => {
  /** Steps a probe session alone and inside a cohort; returns its per-step logits and tokens in both runs. */
  async function probeAloneAndInCohort(sampling = greedy(), kvCacheType: KvCacheType = DEFAULT_KV_CACHE_TYPE) {
    const model = await hfModel('llama', SMALL_DIMS);
    const vocab = model.config.vocabSize;
    const probe = () => drivenSession('probe', promptOf(9, 13, vocab), sampling, 0);
    const run = async (sessions: DrivenSession[]) => {
      const gpu = await gpuRunner(model, { kvCacheType, kernels });
      const driver = new StepDriver(sessions, BLOCK_SIZE, 8);
      const logits: Float32Array[] = [];
      try {
        for (let step = 0; step < 24; step++) {
          const plan = driver.nextPlan();
          const result = await executeDetailed(gpu, plan);
          const i = result.sampleRows.findIndex((r) => plan.rows[r]!.sessionId === 'probe');
          if (i >= 0) logits.push(result.logits.slice(i * vocab, (i + 1) * vocab));
          driver.update(plan, result);
        }
      } finally {
        gpu.dispose();
      }
      return { logits, tokens: sessions.find((s) => s.id === 'probe')!.output };
    };
    const alone = await run([probe()]);
    const others = [
      drivenSession('x', promptOf(10, 30, vocab), { temperature: 1, topK: 0, topP: 1, seed: 8 }, 0),
      drivenSession('y', promptOf(11, 2, vocab), greedy(), 4, 15),
      drivenSession('z', promptOf(12, 7, vocab), { temperature: 0.7, topK: 5, topP: 0.9, seed: 9 }, 6),
      ...Array.from({ length: 4 }, (_, i) => drivenSession(`w${i}`, promptOf(20 + i, 3 + 5 * i, vocab), greedy(), 2 * i + 1)),
    ];
    const batched = await run([others[0]!, others[1]!, probe(), ...others.slice(2)]);
    return { alone, batched };
  }

  it.each(KV_CACHE_TYPES)("%s KV: a row's logits are bitwise the same alone and in a changing cohort of up to 8 rows", async (kvCacheType) => {
    const { alone, batched } = await probeAloneAndInCohort(greedy(), kvCacheType);
    expect(batched.logits.length).toBe(alone.logits.length);
    alone.logits.forEach((l, step) => expect(bits(batched.logits[step]!), `step ${step}`).toEqual(bits(l)));
  });

  it.each(KV_CACHE_TYPES)("%s KV: a row's logits are bitwise the same however its prompt is chunked", async (kvCacheType) => {
    const model = await hfModel('llama', SMALL_DIMS);
    const prompt = promptOf(13, 45, model.config.vocabSize);
    const logitsByChunk = async (chunkSize: number) => {
      const gpu = await gpuRunner(model, { kvCacheType, kernels });
      const driver = new StepDriver([drivenSession('a', prompt, greedy())], BLOCK_SIZE, chunkSize);
      const logits: Float32Array[] = [];
      try {
        while (logits.length < 6) {
          const plan = driver.nextPlan();
          const result = await executeDetailed(gpu, plan);
          if (result.sampleRows.length > 0) logits.push(result.logits.slice());
          driver.update(plan, result);
        }
      } finally {
        gpu.dispose();
      }
      return logits;
    };
    const whole = await logitsByChunk(64);
    for (const chunkSize of [7, 16]) (await logitsByChunk(chunkSize)).forEach((l, i) => expect(bits(l), `chunks of ${chunkSize}, sample ${i}`).toEqual(bits(whole[i]!)));
  });

  it('a seeded sampling row draws the same tokens alone and in a cohort', async () => {
    const { alone, batched } = await probeAloneAndInCohort({ temperature: 0.9, topK: 20, topP: 0.95, seed: 1234 });
    expect(batched.tokens).toEqual(alone.tokens);
    expect(new Set(alone.tokens).size).toBeGreaterThan(1);
  });
});

describe.skipIf(KERNEL_SETTINGS.length === 0)('kernel settings', () => {
  it("'gpu' folds the two RMSNorms of a llama layer into its matmuls: 2 dispatches fewer a layer, the same greedy tokens", async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, layers: 3 });
    const sessions = () => [drivenSession('a', promptOf(1, 9, 97), greedy()), drivenSession('b', promptOf(2, 30, 97), greedy(), 2)];
    const runs = await Promise.all((['gpu', 'cpu'] as const).map(async (kernels) => ({ kernels, ...(await stepLogitsAndLabels(await gpuRunner(model, { kernels }), sessions(), 12, 16)) })));
    const [gpu, cpu] = runs;
    expect(cpu!.labels.length - gpu!.labels.length).toBe(2 * 3);
    expect(gpu!.labels.filter((l) => /^L\d+\.(input_norm|post_attention_norm)$/.test(l))).toEqual([]);
    expect(cpu!.labels).toContain('L2.post_attention_norm');
    // different reductions, so not the same bits; the same tokens and logits within the parity bound
    gpu!.logits.forEach((l, step) => expect(maxAbsDiff(l, cpu!.logits[step]!), `step ${step}`).toBeLessThanOrEqual(2 * LOGITS_MAX_ABS_DIFF));
  });
});

describe('profileStep (testing/step-probe.ts)', () => {
  it('times every dispatch of a step and samples what execute() samples', async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, layers: 2 });
    const gpu = await gpuRunner(model);
    try {
      const sessions = [drivenSession('a', promptOf(1, 9, 97), greedy()), drivenSession('b', promptOf(2, 4, 97), greedy())];
      const plan = new StepDriver(sessions, BLOCK_SIZE, 16).nextPlan();
      const timings = await profileStep(gpu, plan);
      expect(timings).toHaveLength(gpu.dispatchesPerStep);
      expect(timings.map((t) => t.label)).not.toContain('sample_gather'); // a greedy step skips the sampler's radix levels
      expect(timings.map((t) => t.label)).toEqual(expect.arrayContaining(['embedding', 'L0.qkv_proj', 'L0.gate_up_proj', 'L1.attention', 'lm_head', 'sample']));
      for (const t of timings) expect(t.ms, t.label).toBeGreaterThanOrEqual(0);
      expect(timings.reduce((n, t) => n + t.ms, 0)).toBeGreaterThan(0);
      // The split passes compute the same step: the KV it wrote and the ids it drew match a plain run.
      const again = await gpuRunner(model);
      try {
        const profiled = await gpu.execute({ ...plan, stepIndex: 1, rows: plan.rows.map((r) => ({ ...r, tokenIds: Int32Array.of(5), startPos: r.tokenIds.length })) });
        await again.execute(plan);
        const plain = await again.execute({ ...plan, stepIndex: 1, rows: plan.rows.map((r) => ({ ...r, tokenIds: Int32Array.of(5), startPos: r.tokenIds.length })) });
        expect(Array.from(profiled.sampledIds)).toEqual(Array.from(plain.sampledIds));
      } finally {
        again.dispose();
      }
    } finally {
      gpu.dispose();
    }
  });
});

describe('GpuRunner.create under memory pressure', () => {
  it('reports an out-of-memory error from its buffers as a setup failure instead of running', async () => {
    const model = await hfModel('llama', { ...SMALL_DIMS, layers: 1 });
    const pipelines = await testPipelineCache();
    const real = pipelines.device;
    // A device whose out-of-memory scope reports what a real GPU does when createBuffer fails;
    // everything else goes to the real device.
    const scopes: GPUErrorFilter[] = [];
    const device = new Proxy(real, {
      get(target, key) {
        if (key === 'pushErrorScope') return (filter: GPUErrorFilter) => (scopes.push(filter), target.pushErrorScope(filter));
        if (key === 'popErrorScope') {
          return async () => {
            const error = await target.popErrorScope();
            return scopes.pop() === 'out-of-memory' ? (error ?? { message: 'Not enough memory left for buffer "kv-0" (64 GiB)' }) : error;
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    await expect(GpuRunner.create({ device, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 8, maxTokensPerStep: 16, maxRows: 2, maxContext: 64 })).rejects.toThrow(
      /GpuRunner setup failed: Not enough memory left for buffer "kv-0"/,
    );
  });
});

describe.each(KERNEL_SETTINGS)('GpuRunner long rows, %s kernels', (kernels) => {
  it("a row decoding past 512 keys: its logits bitwise the same alone and beside a prefilling row, every step merging split states", async () => {
    const model = await hfModel('llama', SMALL_DIMS);
    const vocab = model.config.vocabSize;
    const sizes = { maxContext: 1024, numBlocks: 64, maxTokensPerStep: 128, kernels };
    const long = () => drivenSession('long', promptOf(3, 530, vocab), greedy());
    /** The long row's logits at each step it samples, and the labels of a step's dispatches. */
    const run = async (sessions: DrivenSession[]) => {
      const gpu = await gpuRunner(model, sizes);
      const driver = new StepDriver(sessions, BLOCK_SIZE, 64);
      const logits: Float32Array[] = [];
      const labels = gpu.dispatchLabels;
      try {
        for (let step = 0; step < 16; step++) {
          const plan = driver.nextPlan();
          const result = await executeDetailed(gpu, plan);
          const i = result.sampleRows.findIndex((r) => plan.rows[r]!.sessionId === 'long');
          if (i >= 0) logits.push(result.logits.slice(i * vocab, (i + 1) * vocab));
          driver.update(plan, result);
        }
      } finally {
        gpu.dispose();
      }
      return { logits, labels };
    };
    const alone = await run([long()]);
    const beside = await run([drivenSession('short', promptOf(4, 200, vocab), greedy(), 9), long()]);
    expect(alone.labels).toContain('L0.attention_merge');
    expect(alone.logits.length).toBeGreaterThan(4);
    alone.logits.forEach((l, step) => expect(bits(beside.logits[step]!), `step ${step}`).toEqual(bits(l)));
  });
});
