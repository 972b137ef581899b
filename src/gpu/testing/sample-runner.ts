// Test-only: runs the sampler's passes (every level, then finish) on rows of logits through the
// kernel harness, with a kernel setting's chunking and overrides. Not used by product code.
import { inverseTemperature } from '../../engine/sample-numerics';
import type { SampledLogprobs, SamplingParams } from '../../engine/types';
import type { KernelSetting } from '../kernels';
import { SAMPLE_HIST_WORDS, samplerShape } from '../sample-plan';
import { SAMPLE_INFO_WORDS, SAMPLE_LOGPROB_WORDS } from '../step-meta';
import { runPasses, type HostData, type Pass } from './kernel-harness';

export interface SampleRow {
  logits: Float32Array;
  sampling: SamplingParams;
  pos: number;
}

/** Every row's sampled id (NON_FINITE_LOGITS as itself, read as the runner does: Int32). */
export async function sampleOnGpu(rows: SampleRow[], setting: KernelSetting): Promise<number[]> {
  return (await sampleWithLogprobsOnGpu(rows, setting)).ids;
}

/** sampleOnGpu, and the logprobs of the rows whose sampling asks for them (slots in row order). */
export async function sampleWithLogprobsOnGpu(rows: SampleRow[], setting: KernelSetting): Promise<{ ids: number[]; logprobs: (SampledLogprobs | undefined)[] }> {
  const vocab = rows[0]!.logits.length;
  const shape = samplerShape(vocab, setting);
  const logits = new Float32Array(rows.length * vocab); // [numRows, vocab]
  const info = new ArrayBuffer(rows.length * SAMPLE_INFO_WORDS * 4); // [numRows, SampleInfo]
  const u32 = new Uint32Array(info);
  const f32 = new Float32Array(info);
  const slots: number[] = [];
  rows.forEach((row, r) => {
    logits.set(row.logits, r * vocab);
    const slot = row.sampling.logprobs === undefined ? -1 : slots.push(r) - 1;
    const o = r * SAMPLE_INFO_WORDS;
    f32[o] = row.sampling.temperature;
    u32[o + 1] = Math.max(0, Math.floor(row.sampling.topK));
    f32[o + 2] = row.sampling.topP;
    u32[o + 3] = row.sampling.seed >>> 0;
    u32[o + 4] = row.pos;
    f32[o + 5] = inverseTemperature(row.sampling.temperature);
    u32[o + 6] = slot < 0 ? 0 : 1 + row.sampling.logprobs!;
    u32[o + 7] = Math.max(0, slot);
  });
  const params = (level: number) => new Uint32Array([rows.length, vocab, shape.chunkSize, shape.numChunks, level, shape.numLevels, 0, 0]);
  const data: HostData[] = [
    logits,
    info,
    new Float32Array(rows.length * vocab),
    new Uint32Array(rows.length * shape.stateWords),
    new Uint32Array(rows.length * SAMPLE_HIST_WORDS),
    new Uint32Array(rows.length),
    new Float32Array(Math.max(1, slots.length) * SAMPLE_LOGPROB_WORDS),
  ];
  const passes: Pass[] = [];
  for (let level = 0; level <= shape.numLevels; level++) {
    data.push(params(level));
    passes.push({ kernel: 'sample', overrides: { WORKGROUP_SIZE: shape.workgroupSize }, workgroups: [shape.numChunks, rows.length], bind: [data.length - 1, 0, 1, 2, 3, 4, 5, 6] });
  }
  data.push(params(0));
  passes.push({ kernel: 'sample_finish', workgroups: [rows.length], bind: [data.length - 1, 0, 1, 2, 3, 4, 5, 6] });
  const result = await runPasses(data, passes, [4, 5, 6]);
  if (new Uint32Array(result.get(4)!).some((c) => c !== 0)) throw new Error('the sampler left counts behind');
  const out = new Float32Array(result.get(6)!);
  const outIds = new Int32Array(result.get(6)!);
  const logprobs: (SampledLogprobs | undefined)[] = rows.map(() => undefined);
  slots.forEach((r, slot) => {
    const o = slot * SAMPLE_LOGPROB_WORDS;
    const n = Math.min(rows[r]!.sampling.logprobs!, vocab);
    logprobs[r] = {
      logprob: out[o]!,
      topIds: Int32Array.from({ length: n }, (_, t) => outIds[o + 1 + 2 * t]!),
      topLogprobs: Float32Array.from({ length: n }, (_, t) => out[o + 2 + 2 * t]!),
    };
  });
  return { ids: Array.from(new Int32Array(result.get(5)!)), logprobs };
}
