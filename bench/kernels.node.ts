// The per-kernel benchmark: decode-step time, GPU time, overhead and per-op GPU time at B = 1-16
// for the embedded model and random-weight SmolLM2-135M / Qwen2.5-0.5B shapes (Q8_0, Q4_0), in
// Node on the npm webgpu adapter (SwiftShader unless COHORT_GPU=native). Writes bench/results/;
// COHORT_BENCH_NOTE adds a line on the conditions of the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { StepPlan, StepRow } from '../src/engine/types';
import type { ModelDesc } from '../src/model/desc';
import { loadHfModel } from '../src/model/hf-loader';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { testPipelineCache } from '../src/gpu/testing/kernel-harness';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { folderOpener } from '../tools/models/node-files';
import { publishedShapeModel } from '../tools/models/published-shapes';
import { median } from '../src/protocol/metrics';
import { nodeBenchDevice } from './node-device';
import { opTotals, renderKernelMarkdown, type BatchPoint, type KernelBenchReport, type ModelSweep } from './kernel-report';

const BATCHES = (process.env.COHORT_BENCH_BATCHES ?? '1,2,4,8,16').split(',').map(Number);
const REPEATS = Number(process.env.COHORT_BENCH_REPEATS ?? 3);
const MODELS = (process.env.COHORT_BENCH_MODELS ?? 'cohort-tiny,SmolLM2-135M:q8_0,SmolLM2-135M:q4_0,Qwen2.5-0.5B:q8_0,Qwen2.5-0.5B:q4_0').split(',');
const BLOCK_SIZE = 16;
const PROMPT_TOKENS = 4;

async function loadModel(spec: string): Promise<ModelDesc> {
  if (spec === 'cohort-tiny') {
    return loadHfModel(folderOpener(repoPath('public/models/cohort-tiny')), { source: 'cohort-tiny (embedded, f32)' });
  }
  const [shape, dtype] = spec.split(':');
  if (dtype !== 'q8_0' && dtype !== 'q4_0') throw new Error(`${spec}: use SHAPE:q8_0 or SHAPE:q4_0`);
  return publishedShapeModel(shape!, dtype);
}

/** One session per row: its position, next token and block table (blocks handed out in order). */
interface Row {
  id: string;
  pos: number;
  next: number[];
  blocks: number[];
}

function planFor(rows: Row[], stepIndex: number, nextBlock: { n: number }): StepPlan {
  const planRows: StepRow[] = rows.map((r) => {
    while (r.blocks.length * BLOCK_SIZE < r.pos + r.next.length) r.blocks.push(nextBlock.n++);
    return { sessionId: r.id, tokenIds: Int32Array.from(r.next), startPos: r.pos, blockTable: Int32Array.from(r.blocks), sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 }, sample: true };
  });
  return { stepIndex, rows: planRows };
}

function advance(rows: Row[], sampled: Int32Array): void {
  rows.forEach((r, i) => {
    r.pos += r.next.length;
    r.next = [sampled[i]! >= 0 ? sampled[i]! : 0];
  });
}

async function sweep(spec: string): Promise<ModelSweep> {
  const model = await loadModel(spec);
  const pipelines = await testPipelineCache();
  const maxBatch = Math.max(...BATCHES);
  const stepsPerBatch = REPEATS + 2;
  const maxContext = PROMPT_TOKENS + stepsPerBatch * BATCHES.length + BLOCK_SIZE;
  const numBlocks = 1 + maxBatch * Math.ceil(maxContext / BLOCK_SIZE);
  const runner = await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks, maxTokensPerStep: maxBatch * PROMPT_TOKENS, maxRows: maxBatch, maxContext });
  const rows: Row[] = Array.from({ length: maxBatch }, (_, i) => ({ id: `s${i}`, pos: 0, next: Array.from({ length: PROMPT_TOKENS }, (_, j) => (i * 13 + j * 7 + 1) % model.config.vocabSize), blocks: [] }));
  const nextBlock = { n: 1 };
  let stepIndex = 0;
  try {
    advance(rows, (await runner.execute(planFor(rows, stepIndex++, nextBlock))).sampledIds); // every row's prompt
    const points: BatchPoint[] = [];
    for (const batch of BATCHES) {
      const cohort = rows.slice(0, batch);
      advance(cohort, (await runner.execute(planFor(cohort, stepIndex++, nextBlock))).sampledIds); // warm-up
      const wall: number[] = [];
      const gpu: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        const plan = planFor(cohort, stepIndex++, nextBlock);
        const t0 = performance.now();
        const result = await runner.execute(plan);
        wall.push(performance.now() - t0);
        if (result.gpuTimeMs !== undefined) gpu.push(result.gpuTimeMs);
        advance(cohort, result.sampledIds);
      }
      const profiled = await runner.profileStep(planFor(cohort, stepIndex++, nextBlock));
      cohort.forEach((r) => (r.pos += r.next.length)); // the profiled step wrote KV; its ids are not needed
      points.push({ batch, stepMs: median(wall), gpuMs: median(gpu), ops: opTotals(profiled) });
      console.log(`${spec} B=${batch}: step ${median(wall).toFixed(1)} ms, GPU ${median(gpu).toFixed(1)} ms`);
    }
    return { model: model.source, weightBytes: runner.memory.weights, dispatchesPerStep: runner.dispatchesPerStep, points };
  } finally {
    runner.dispose();
  }
}

async function main(): Promise<void> {
  const { adapter, machine } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const sweeps: ModelSweep[] = [];
  for (const spec of MODELS) sweeps.push(await sweep(spec));
  const date = new Date().toISOString().slice(0, 10);
  const note = process.env.COHORT_BENCH_NOTE;
  const report: KernelBenchReport = { schema: 1, date, machine, adapter, repeats: REPEATS, ...(note ? { note } : {}), sweeps };
  const dir = process.env.COHORT_BENCH_RESULTS_DIR ?? repoPath('bench/results');
  mkdirSync(dir, { recursive: true });
  const base = `${dir}/${date}-${machine}-kernels`;
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${base}.md`, renderKernelMarkdown(report));
  console.log(renderKernelMarkdown(report));
  console.log(`wrote ${base}.{json,md}`);
}

await main();
