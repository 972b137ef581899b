// Sampling with penalties, logit bias and logprobs against plain sampling: the same decode step
// (B rows, one GpuRunner) with each row's sampling plain, penalized (frequency, presence,
// repetition over a history, a logit_bias), returning logprobs (top 5, top 20), or both, variants
// interleaved in every repeat so the ratios share the machine's conditions. Ratios only, never
// absolute claims. Node on the npm webgpu adapter (SwiftShader unless COHORT_GPU=native).
// Writes bench/results/<date>-<machine>-sampling-features.{json,md}.
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { SamplingParams, StepPlan, StepRow } from '../src/engine/types';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { testPipelineCache } from '../src/gpu/testing/kernel-harness';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { median } from '../src/protocol/metrics';
import { publishedShapeModel } from '../tools/models/published-shapes';
import { mulberry32 } from '../src/engine/seeded-random';
import { nodeBenchDevice } from './node-device';

const BATCH = Number(process.env.COHORT_BENCH_BATCH ?? 8);
const REPEATS = Number(process.env.COHORT_BENCH_REPEATS ?? 5);
/** A published shape with few layers: the sampler's share of the step is what is measured. */
const SHAPE = process.env.COHORT_BENCH_MODEL ?? 'SmolLM2-135M';
const LAYERS = Number(process.env.COHORT_BENCH_LAYERS ?? 2);
const BLOCK_SIZE = 16;
/** Tokens each row has seen (prompt 192, output 64): what the penalties count. */
const PROMPT = 192;
const OUTPUT = 64;
const CONTEXT = PROMPT + OUTPUT;

const plain: SamplingParams = { temperature: 0.8, topK: 40, topP: 0.95, seed: 1 };
const penalties: Partial<SamplingParams> = { frequencyPenalty: 0.5, presencePenalty: 0.3, repetitionPenalty: 1.1, logitBias: { 13: 5, 198: -100 } };
const VARIANTS: Record<string, Partial<SamplingParams>> = {
  plain: {},
  penalties,
  'logprobs 5': { logprobs: 5 },
  'logprobs 20': { logprobs: 20 },
  'penalties + logprobs 20': { ...penalties, logprobs: 20 },
};

async function main(): Promise<void> {
  const { adapter, machine } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const model = publishedShapeModel(SHAPE, 'q8_0', 1, LAYERS);
  const vocab = model.config.vocabSize;
  const pipelines = await testPipelineCache();
  const blocksPerRow = Math.ceil((CONTEXT + 1) / BLOCK_SIZE);
  const runner = await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + BATCH * blocksPerRow, maxTokensPerStep: BATCH, maxRows: BATCH, maxContext: CONTEXT + BLOCK_SIZE, maxDraftTokens: 0 });
  const random = mulberry32(7);
  const histories = Array.from({ length: BATCH }, () => Int32Array.from({ length: CONTEXT }, () => Math.floor(random() * vocab)));
  const plan = (variant: Partial<SamplingParams>, stepIndex: number): StepPlan => ({
    stepIndex,
    rows: Array.from({ length: BATCH }, (_, r): StepRow => ({
      sessionId: `s${r}`,
      tokenIds: Int32Array.of(histories[r]![CONTEXT - 1]!),
      startPos: CONTEXT - 1,
      blockTables: [Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b)],
      sampling: { ...plain, ...variant, seed: r },
      sample: true,
      penaltyTokens: histories[r]!,
      numPromptTokens: PROMPT,
    })),
  });
  const names = Object.keys(VARIANTS);
  const wall = new Map<string, number[]>(names.map((n) => [n, []]));
  const gpu = new Map<string, number[]>(names.map((n) => [n, []]));
  let stepIndex = 0;
  try {
    for (const name of names) await runner.execute(plan(VARIANTS[name]!, stepIndex++)); // warm-up: every pipeline and buffer
    for (let i = 0; i < REPEATS; i++) {
      for (const name of names) {
        const t0 = performance.now();
        const result = await runner.execute(plan(VARIANTS[name]!, stepIndex++));
        wall.get(name)!.push(performance.now() - t0);
        if (result.gpuTimeMs !== undefined) gpu.get(name)!.push(result.gpuTimeMs);
      }
    }
  } finally {
    runner.dispose();
  }
  const base = { wall: median(wall.get('plain')!), gpu: gpu.get('plain')!.length ? median(gpu.get('plain')!) : null };
  const points = names.map((name) => {
    const g = gpu.get(name)!;
    return { variant: name, wallRatio: median(wall.get(name)!) / base.wall, gpuRatio: g.length && base.gpu ? median(g) / base.gpu : null };
  });
  const date = new Date().toISOString().slice(0, 10);
  const note = process.env.COHORT_BENCH_NOTE;
  const report = { schema: 1, date, machine, adapter, model: `${SHAPE} shape, ${LAYERS} layers, q8_0 random weights`, vocab, batch: BATCH, prompt: PROMPT, output: OUTPUT, repeats: REPEATS, ...(note ? { note } : {}), points };
  const lines = [
    `# Sampling with penalties and logprobs against plain sampling (${date}, ${machine})`,
    '',
    `${adapter}; ${report.model} (vocabulary ${vocab}); ${BATCH} decode rows at context ${CONTEXT} (prompt ${PROMPT}, output ${OUTPUT}), every row the variant's sampling (temperature 0.8, top-k 40, top-p 0.95 besides); median of ${REPEATS} interleaved repeats; whole decode step against plain sampling's.${note ? ` ${note}` : ''}`,
    '',
    '| sampling | step wall ratio | step GPU ratio |',
    '| --- | ---: | ---: |',
    ...points.map((p) => `| ${p.variant} | ${p.wallRatio.toFixed(2)} | ${p.gpuRatio === null ? 'n/a' : p.gpuRatio.toFixed(2)} |`),
    '',
  ];
  const dir = process.env.COHORT_BENCH_RESULTS_DIR ?? repoPath('bench/results');
  mkdirSync(dir, { recursive: true });
  const out = `${dir}/${date}-${machine}-sampling-features`;
  writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${out}.md`, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${out}.{json,md}`);
}

await main();
