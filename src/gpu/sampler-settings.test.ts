// GpuRunner's sampler in both kernel settings on a synthetic llama whose vocabulary spans two
// 'gpu' chunks: every sampled id is sampleToken's on the logits the runner drew from, greedy and
// sampled rows in one cohort, and both settings draw the same ids. Node WebGPU (SwiftShader).
import { describe, expect, it } from 'vitest';
import { hfFiles, syntheticModel, type SynthDims } from '../model/testing/synthetic-model-fixtures';
import type { SamplingParams } from '../engine/types';
import { mapOpener } from '../model/byte-source';
import { loadHfModel } from '../model/hf-loader';
import { sampleToken } from '../reference/sample';
import { GpuRunner } from './gpu-runner';
import type { KernelSetting } from './kernels';
import { testPipelineCache } from './testing/kernel-harness';
import { loadShader } from './testing/node-gpu';
import { drivenSession, greedy, StepDriver } from './testing/step-driver';
import { executeDetailed } from './testing/step-probe';

const VOCAB = 3000; // two 2048-id chunks in the 'gpu' setting
const DIMS: Partial<SynthDims> = { hidden: 64, intermediate: 128, heads: 4, kvHeads: 2, headDim: 16, vocab: VOCAB, layers: 1 };
const BLOCK_SIZE = 16;
const SETTINGS: SamplingParams[] = [
  { temperature: 0.7, topK: 40, topP: 0.9, seed: 11 },
  { temperature: 1.2, topK: 0, topP: 0.95, seed: 12 }, // past the candidate cap: the fallback
  { temperature: 0.9, topK: 300, topP: 1, seed: 13 },
];

async function run(setting: KernelSetting): Promise<number[][]> {
  const m = await loadHfModel(mapOpener(hfFiles(syntheticModel({ arch: 'llama', dims: DIMS, seed: 5 }), 'f32')), { source: 'synthetic-llama-3000' });
  const pipelines = await testPipelineCache();
  const gpu = await GpuRunner.create({ device: pipelines.device, pipelines, model: m, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 32, maxTokensPerStep: 64, maxRows: 4, maxContext: 128, maxDraftTokens: 0, kernels: setting });
  const sessions = [drivenSession('g', [1, 2, 3], greedy()), ...SETTINGS.map((s, i) => drivenSession(`s${i}`, [4 + i, 50 * i, 7], s))];
  const driver = new StepDriver(sessions, BLOCK_SIZE, 8);
  try {
    for (let step = 0; step < 5; step++) {
      const plan = driver.nextPlan();
      const result = await executeDetailed(gpu, plan);
      result.sampleRows.forEach((r, i) => {
        const row = plan.rows[r]!;
        const pos = row.startPos + row.tokenIds.length;
        expect(result.sampledIds[r], `${setting} step ${step} row ${row.sessionId}`).toBe(sampleToken(result.logits.subarray(i * VOCAB, (i + 1) * VOCAB), row.sampling, pos));
      });
      driver.update(plan, result);
    }
  } finally {
    gpu.dispose();
  }
  return sessions.map((s) => s.output);
}

describe('the sampler in GpuRunner', () => {
  it("draws sampleToken's ids in the 'cpu' and the 'gpu' setting alike", async () => {
    const cpu = await run('cpu');
    const gpu = await run('gpu');
    expect(cpu.every((out) => out.length === 5)).toBe(true);
    expect(gpu).toEqual(cpu);
  });
});
