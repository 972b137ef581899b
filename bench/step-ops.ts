// Attention and sampling of a published shape in profiled decode steps, both kernel settings:
// attention's GPU ms at 1k and 4k keys (B = 1 and 8) with its KV GB/s against the copy kernel's,
// and the sampler's GPU ms greedy vs temperature 0.7 / top-p 0.9 / top-k 40. A one-layer model of
// the shape (attention is per layer; lm_head and the vocabulary are whole). Not a model step's time.
import type { StepPlan, StepRow } from '../src/engine/types';
import { GpuRunner } from '../src/gpu/gpu-runner';
import type { KernelSetting } from '../src/gpu/kernels';
import type { PipelineCache } from '../src/gpu/pipeline-cache';
import { loadShader } from '../src/gpu/testing/node-gpu';
import { profileStep } from '../src/gpu/testing/step-probe';
import { samplerVocabPasses } from '../src/gpu/sample-plan';
import { DEFAULT_KV_CACHE_TYPE, kvValueBytes } from '../src/engine/kv-types';
import { median } from '../src/protocol/metrics';
import { publishedShapeModel } from '../tools/models/published-shapes';

export interface StepOpPoint {
  model: string;
  setting: KernelSetting;
  /** e.g. 'attention B=8 @ 4096 keys', 'sample B=1 greedy'. */
  case: string;
  /** Dispatches timed (summed over those whose labels the case names). */
  dispatches: number;
  ms: number;
  /** Sampling: the passes over a row's logits its setting costs at most (sample-plan.ts), whatever the adapter. */
  vocabPasses?: number;
  /** Attention: KV bytes read per step / ms; sampling: logits bytes (one pass) / ms. */
  gbs: number;
  ofCopy: number;
}

const BLOCK_SIZE = 16;
const GREEDY = { temperature: 0, topK: 0, topP: 1, seed: 0 };
const SAMPLED = { temperature: 0.7, topK: 40, topP: 0.9, seed: 7 };

/** Summed GPU ms of the dispatches whose labels `pick` takes, median over `repeats` profiled steps. */
async function opMs(runner: GpuRunner, plan: StepPlan, pick: (label: string) => boolean, repeats: number): Promise<{ ms: number; dispatches: number }> {
  await runner.execute(plan); // warm-up
  const totals: number[] = [];
  let dispatches = 0;
  for (let i = 0; i < repeats; i++) {
    const timings = (await profileStep(runner, { ...plan, stepIndex: plan.stepIndex + 1 + i })).filter((t) => pick(t.label));
    dispatches = timings.length;
    totals.push(timings.reduce((n, t) => n + t.ms, 0));
  }
  return { ms: median(totals), dispatches };
}

export interface StepOpsOptions {
  model: string;
  settings: KernelSetting[];
  contexts: number[];
  batches: number[];
  repeats: number;
  copyGbs: number;
  log?: (line: string) => void;
}

export async function stepOpsSweep(cache: PipelineCache, o: StepOpsOptions): Promise<StepOpPoint[]> {
  const model = publishedShapeModel(o.model, 'q8_0', 3, 1);
  const c = model.config;
  const maxBatch = Math.max(...o.batches);
  const maxContext = Math.max(...o.contexts) + BLOCK_SIZE;
  const blocksPerRow = Math.ceil(maxContext / BLOCK_SIZE);
  const kvType = DEFAULT_KV_CACHE_TYPE;
  const points: StepOpPoint[] = [];
  for (const setting of o.settings) {
    const runner = await GpuRunner.create({ device: cache.device, pipelines: cache, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + maxBatch * blocksPerRow, kvBudgetBytes: 2 ** 30, maxTokensPerStep: maxBatch, maxRows: maxBatch, maxContext, maxDraftTokens: 0, kvCacheType: kvType, kernels: setting });
    try {
      // the cache holds no real history: timing does not depend on its values
      const row = (r: number, pos: number, sampling: StepRow['sampling']): StepRow => ({
        sessionId: `s${r}`,
        tokenIds: Int32Array.of((r * 13 + 1) % c.vocabSize),
        startPos: pos,
        blockTables: [Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b)],
        sampling,
        sample: true,
      });
      let stepIndex = 0;
      const measure = async (name: string, rows: StepRow[], pick: (label: string) => boolean, bytes: number, vocabPasses?: number) => {
        const { ms, dispatches } = await opMs(runner, { stepIndex, rows }, pick, o.repeats);
        stepIndex += o.repeats + 2;
        const gbs = bytes / (ms * 1e6);
        points.push({ model: o.model, setting, case: name, dispatches, ms, gbs, ofCopy: gbs / o.copyGbs, ...(vocabPasses === undefined ? {} : { vocabPasses }) });
        o.log?.(`${o.model} ${setting} ${name}: ${dispatches} dispatches, ${ms.toFixed(3)} ms, ${gbs.toFixed(2)} GB/s`);
      };
      const kvRowBytes = 2 * kvValueBytes(kvType, c.numKvHeads * c.headDim); // K and V of one position
      for (const keys of o.contexts) {
        for (const batch of o.batches) {
          const rows = Array.from({ length: batch }, (_, r) => row(r, keys - 1, GREEDY));
          await measure(`attention B=${batch} @ ${keys} keys`, rows, (label) => /\.attention/.test(label), batch * keys * kvRowBytes);
        }
      }
      for (const batch of o.batches) {
        for (const [kind, sampling] of [['greedy', GREEDY], ['T 0.7, top-p 0.9, top-k 40', SAMPLED]] as const) {
          const rows = Array.from({ length: batch }, (_, r) => row(r, 63, sampling));
          await measure(`sample B=${batch} ${kind}`, rows, (label) => label.startsWith('sample'), batch * c.vocabSize * 4, samplerVocabPasses(sampling, c.vocabSize));
        }
      }
    } finally {
      runner.dispose();
    }
  }
  return points;
}
