// Test scaffolding shared by the runner tests: a small GpuRunner, prompts, and GpuRunner held to
// CpuRunner on the same driven plans. Never imported by product code.
import { expect } from 'vitest';
import type { ModelDesc } from '../../model/desc';
import type { CpuRunner } from '../../reference/cpu-runner';
import { GpuRunner, type GpuRunnerOptions } from '../gpu-runner';
import { testPipelineCache } from './kernel-harness';
import { loadShader, kernelSettingFromEnv } from './node-gpu';
import { executeDetailed, profileStep } from './step-probe';
import { planForGroups, StepDriver, type DrivenSession } from './step-driver';

/** GPU f32 sums vs the CPU oracle's f64 sums, through the whole model. */
export const LOGITS_MAX_ABS_DIFF = 1e-3;
export const BLOCK_SIZE = 16;

/** A GpuRunner on the test device: 64 blocks of 16, 64 tokens and 8 rows a step, 512 positions. */
export async function testGpuRunner(model: ModelDesc, options: Partial<GpuRunnerOptions> = {}): Promise<GpuRunner> {
  const pipelines = await testPipelineCache();
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 64, maxTokensPerStep: 64, maxRows: 8, maxContext: 512, kernels: kernelSettingFromEnv(), ...options });
}

export function promptOf(seed: number, length: number, vocab: number): number[] {
  return Array.from({ length }, (_, i) => (seed * 31 + i * 17 + ((i * i) % 7)) % vocab);
}

export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/**
 * Runs both runners on the same plans (driven by the CPU's tokens; a table per GPU KV cache group,
 * the CPU reading as many as it keeps): sampled ids equal at every step. Disposes `gpu`; returns the worst logits gap.
 */
export async function compareRunners(cpu: CpuRunner, gpu: GpuRunner, sessions: DrivenSession[], numSteps: number, chunkSize: number): Promise<number> {
  const driver = new StepDriver(sessions, BLOCK_SIZE, chunkSize, gpu.kvGroups);
  let worst = 0;
  try {
    for (let step = 0; step < numSteps; step++) {
      const plan = driver.nextPlan();
      const expected = cpu.executeDetailed(planForGroups(plan, cpu.kvGroups.length));
      const actual = await executeDetailed(gpu, plan);
      expect(actual.sampleRows).toEqual(expected.sampleRows);
      expect(Array.from(actual.sampledIds), `step ${step}`).toEqual(Array.from(expected.sampledIds));
      worst = Math.max(worst, maxAbsDiff(actual.logits, expected.logits));
      driver.update(plan, expected);
    }
  } finally {
    gpu.dispose();
  }
  if (process.env.COHORT_REPORT) console.log(`${cpu.weights.config.arch}: worst logits gap ${worst}`);
  return worst;
}

/** Every step's logits on `gpu` over driven `sessions`, and the labels of the dispatches one more step runs. Disposes `gpu`. */
export async function stepLogitsAndLabels(gpu: GpuRunner, sessions: DrivenSession[], numSteps: number, chunkSize: number): Promise<{ logits: Float32Array[]; labels: string[] }> {
  const driver = new StepDriver(sessions, BLOCK_SIZE, chunkSize, gpu.kvGroups);
  const logits: Float32Array[] = [];
  try {
    for (let step = 0; step < numSteps; step++) {
      const plan = driver.nextPlan();
      const result = await executeDetailed(gpu, plan);
      logits.push(result.logits);
      driver.update(plan, result);
    }
    return { logits, labels: (await profileStep(gpu, driver.nextPlan())).map((t) => t.label) };
  } finally {
    gpu.dispose();
  }
}
