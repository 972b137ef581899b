// The per-kernel benchmark: decode-step time, GPU time, overhead and per-op GPU time at B = 1-16
// for the embedded model and random-weight SmolLM2-135M / Qwen2.5-0.5B shapes (Q8_0, Q4_0), in
// Node on the npm webgpu adapter (SwiftShader unless COHORT_GPU=native), and for the models in
// COHORT_BENCH_OPCLASS_MODELS (default cohort-tiny) attention's and matmul's achieved GFLOP/s and
// GB/s in a 512-token prefill chunk at context 1,200 and in decode at NIAH length (context 1,230);
// and, for COHORT_BENCH_WINDOW_MODELS (default Gemma-3-1B:q8_0; empty: none), decode at context
// 4,096 with the sliding layers in their window pool (GpuRunner's windowKv, its default); and first,
// each projection's matmul of published shapes per stored type in both kernel settings against a
// copy kernel's bandwidth (roofline.ts; COHORT_BENCH_ROOFLINE_MODELS / _DTYPES).
// Writes bench/results/; COHORT_BENCH_NOTE adds a line on the conditions of the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { firstReadBlock, type StepPlan, type StepRow } from '../src/engine/types';
import type { ModelDesc } from '../src/model/desc';
import { loadHfModel } from '../src/model/hf-loader';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { testPipelineCache } from '../src/gpu/testing/kernel-harness';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { profileStep } from '../src/gpu/testing/step-probe';
import { folderOpener } from '../tools/models/node-files';
import { publishedShapeModel } from '../tools/models/published-shapes';
import { median } from '../src/protocol/metrics';
import { nodeBenchDevice } from './node-device';
import { tensorBytes } from '../src/model/quant-layout';
import { attentionWork, matmulWork, opTotals, renderKernelMarkdown, type BatchPoint, type KernelBenchReport, type ModelSweep, type OpClassPoint, type RooflineSection, type WorkShape } from './kernel-report';
import { launchShortfalls, rooflineSweep } from './roofline';
import { stepOpsSweep, type StepOpPoint } from './step-ops';
import type { KernelSetting } from '../src/gpu/kernels';
import { runsOnCpu } from '../src/gpu/device';
import { MODEL_SHAPES } from '../tools/models/published-shapes';
import type { DType } from '../src/model/desc';

const BATCHES = (process.env.COHORT_BENCH_BATCHES ?? '1,2,4,8,16').split(',').map(Number);
const REPEATS = Number(process.env.COHORT_BENCH_REPEATS ?? 3);
const MODELS = (process.env.COHORT_BENCH_MODELS ?? 'cohort-tiny,SmolLM2-135M:q8_0,SmolLM2-135M:q4_0,Qwen2.5-0.5B:q8_0,Qwen2.5-0.5B:q4_0').split(',').filter(Boolean);
const WINDOW_MODELS = (process.env.COHORT_BENCH_WINDOW_MODELS ?? 'Gemma-3-1B:q8_0').split(',').filter(Boolean);
/** Where the window-pool decode rows sit: past a sliding window of 512 eight times over. */
const WINDOW_DECODE_CONTEXT = 4096;
/**
 * Shapes whose projections roofline.ts times per stored type, both kernel settings (empty: none).
 * A CPU adapter takes one shape and type by default: the 'gpu' setting's lane reductions run ~5x
 * slower there, and every type at every shape would take a quarter of an hour.
 */
const rooflineList = (name: string, onGpu: string, onCpu: string, cpu: boolean) => (process.env[name] ?? (cpu ? onCpu : onGpu)).split(',').filter(Boolean);
const rooflineModels = (cpu: boolean) => rooflineList('COHORT_BENCH_ROOFLINE_MODELS', 'Llama-3.2-1B,Qwen2.5-0.5B,Gemma-3-1B', 'Llama-3.2-1B', cpu);
const rooflineDtypes = (cpu: boolean) => rooflineList('COHORT_BENCH_ROOFLINE_DTYPES', 'f16,q8_0,q4_0,q4_K,q6_K', 'q4_K', cpu) as DType[];
/** The shape whose attention (1k and 4k keys) and sampling step-ops.ts times in both settings (empty: none). */
const STEP_OPS_MODEL = process.env.COHORT_BENCH_STEP_OPS_MODEL ?? 'Llama-3.2-1B';
const OPCLASS_MODELS = (process.env.COHORT_BENCH_OPCLASS_MODELS ?? 'cohort-tiny').split(',');
const BLOCK_SIZE = 16;
const PROMPT_TOKENS = 4;
const PREFILL_TOKENS = 512;
const PREFILL_CONTEXT = 1200;
const DECODE_CONTEXT = 1230;
/** Matmul dispatches: every projection, fused or not (q/k/v runs, gate_up with its SwiGLU store), and lm_head. */
const isMatmulOp = (op: string): boolean => op.endsWith('_proj') || op === 'lm_head';

async function loadModel(spec: string): Promise<ModelDesc> {
  if (spec === 'cohort-tiny') {
    return loadHfModel(folderOpener(repoPath('public/models/cohort-tiny')), { source: 'cohort-tiny (embedded, f32)' });
  }
  const [shape, dtype] = spec.split(':');
  if (dtype !== 'q8_0' && dtype !== 'q4_0') throw new Error(`${spec}: use SHAPE:q8_0 or SHAPE:q4_0`);
  return publishedShapeModel(shape!, dtype);
}

/** Median wall and GPU ms of REPEATS runs of `plan` after a warm-up, and one profiled run's per-op totals. */
async function timeStep(runner: GpuRunner, plan: StepPlan, batch: number): Promise<BatchPoint> {
  await runner.execute(plan); // warm-up
  const wall: number[] = [];
  const gpu: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const t0 = performance.now();
    const result = await runner.execute({ ...plan, stepIndex: plan.stepIndex + 1 + i });
    wall.push(performance.now() - t0);
    if (result.gpuTimeMs !== undefined) gpu.push(result.gpuTimeMs);
  }
  const ops = opTotals(await profileStep(runner, { ...plan, stepIndex: plan.stepIndex + 1 + REPEATS }));
  return { batch, stepMs: median(wall), gpuMs: median(gpu), ops };
}

/**
 * Decode at context 4,096 on a model with sliding-window layers, the window pool on: every row's
 * window table holds only the blocks its window reaches (what the engine leaves), the global layers
 * read all 256 blocks. As in opClassSweep the cache holds no real history (timing does not depend
 * on its values) and each row decodes at the same position every step.
 */
async function windowSweep(spec: string, kernels: KernelSetting, tag: string): Promise<ModelSweep> {
  const model = await loadModel(spec);
  const pipelines = await testPipelineCache();
  const maxBatch = Math.max(...BATCHES);
  const maxContext = WINDOW_DECODE_CONTEXT + BLOCK_SIZE;
  const blocksPerRow = Math.ceil(WINDOW_DECODE_CONTEXT / BLOCK_SIZE);
  // the default budget is what a CPU adapter leaves beside 1 GB of weights (its minimum): name one that holds every row
  const runner = await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + maxBatch * blocksPerRow, kvBudgetBytes: 1024 * 2 ** 20, maxTokensPerStep: maxBatch, maxRows: maxBatch, maxContext, maxDraftTokens: 0, kernels });
  if (runner.numBlocks < 1 + maxBatch * blocksPerRow) throw new Error(`${spec}: ${runner.numBlocks} main blocks hold fewer than ${maxBatch} rows of ${WINDOW_DECODE_CONTEXT} positions`);
  try {
    const group = runner.kvGroups[1];
    if (!group || group.window === null) throw new Error(`${spec}: no sliding-window group (${runner.kvNote ?? 'no sliding layers'})`);
    const pos = WINDOW_DECODE_CONTEXT - 1;
    const firstWindowBlock = firstReadBlock(group.window, BLOCK_SIZE, pos);
    const windowBlocksPerRow = blocksPerRow - firstWindowBlock;
    const row = (r: number): StepRow => ({
      sessionId: `s${r}`,
      tokenIds: Int32Array.of((r * 13 + 1) % model.config.vocabSize),
      startPos: pos,
      blockTables: [
        Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b),
        Int32Array.from({ length: blocksPerRow }, (_, b) => (b < firstWindowBlock ? 0 : 1 + r * windowBlocksPerRow + b - firstWindowBlock)),
      ],
      sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 },
      sample: true,
    });
    const points: BatchPoint[] = [];
    let stepIndex = 0;
    for (const batch of BATCHES) {
      const point = await timeStep(runner, { stepIndex, rows: Array.from({ length: batch }, (_, r) => row(r)) }, batch);
      stepIndex += REPEATS + 2;
      points.push(point);
      console.log(`${spec} @ ctx ${WINDOW_DECODE_CONTEXT}, window pool B=${batch}: step ${point.stepMs.toFixed(1)} ms, GPU ${point.gpuMs.toFixed(1)} ms`);
    }
    const kvMiB = (runner.memory.kv / 2 ** 20).toFixed(0);
    return { model: `${model.source}${tag} @ ctx ${WINDOW_DECODE_CONTEXT}, window pool (${group.numBlocks} blocks; KV ${kvMiB} MiB)`, weightBytes: runner.memory.weights, dispatchesPerStep: runner.dispatchesPerStep, points };
  } finally {
    runner.dispose();
  }
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
    return { sessionId: r.id, tokenIds: Int32Array.from(r.next), startPos: r.pos, blockTables: [Int32Array.from(r.blocks)], sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 }, sample: true };
  });
  return { stepIndex, rows: planRows };
}

function advance(rows: Row[], sampled: Int32Array): void {
  rows.forEach((r, i) => {
    r.pos += r.next.length;
    r.next = [sampled[i]! >= 0 ? sampled[i]! : 0];
  });
}

async function sweep(spec: string, kernels: KernelSetting, tag: string): Promise<ModelSweep> {
  const model = await loadModel(spec);
  const pipelines = await testPipelineCache();
  const maxBatch = Math.max(...BATCHES);
  const stepsPerBatch = REPEATS + 2;
  const maxContext = PROMPT_TOKENS + stepsPerBatch * BATCHES.length + BLOCK_SIZE;
  const numBlocks = 1 + maxBatch * Math.ceil(maxContext / BLOCK_SIZE);
  const runner = await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks, maxTokensPerStep: maxBatch * PROMPT_TOKENS, maxRows: maxBatch, maxContext, maxDraftTokens: 0, kernels }); // it sends no drafts: no logits held for them
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
      const profiled = await profileStep(runner, planFor(cohort, stepIndex++, nextBlock));
      cohort.forEach((r) => (r.pos += r.next.length)); // the profiled step wrote KV; its ids are not needed
      points.push({ batch, stepMs: median(wall), gpuMs: median(gpu), ops: opTotals(profiled) });
      console.log(`${spec} B=${batch}: step ${median(wall).toFixed(1)} ms, GPU ${median(gpu).toFixed(1)} ms`);
    }
    const opClasses = OPCLASS_MODELS.includes(spec) ? await opClassSweep(model, kernels) : undefined;
    return { model: `${model.source}${tag}`, weightBytes: runner.memory.weights, dispatchesPerStep: runner.dispatchesPerStep, points, ...(opClasses ? { opClasses } : {}) };
  } finally {
    runner.dispose();
  }
}

function workShape(model: ModelDesc): WorkShape {
  const c = model.config;
  let linearWeightBytes = 0;
  for (const t of model.tensors.values()) if (/^model\.layers\.\d+\..*_proj\.weight$/.test(t.name)) linearWeightBytes += tensorBytes(t.dtype, t.shape);
  const head = model.tensors.get('lm_head.weight') ?? model.tensors.get('model.embed_tokens.weight')!;
  return {
    numLayers: c.numLayers,
    numHeads: c.numHeads,
    headDim: c.headDim,
    hidden: c.hiddenSize,
    qDim: c.numHeads * c.headDim,
    kvDim: c.numKvHeads * c.headDim,
    intermediate: c.intermediateSize,
    vocab: c.vocabSize,
    linearWeightBytes,
    lmHeadBytes: tensorBytes(head.dtype, head.shape),
  };
}

/**
 * Attention vs matmul in the same profiled steps: one row's 512-token prefill chunk ending at
 * context 1,200, and B decode rows at context 1,230 for each B. The cache holds no real history
 * (timing does not depend on its values), so no step has to fill it first.
 */
async function opClassSweep(model: ModelDesc, kernels: KernelSetting): Promise<OpClassPoint[]> {
  const pipelines = await testPipelineCache();
  const maxBatch = Math.max(...BATCHES);
  const maxContext = DECODE_CONTEXT + BLOCK_SIZE;
  const blocksPerRow = Math.ceil(maxContext / BLOCK_SIZE);
  const runner = await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + maxBatch * blocksPerRow, maxTokensPerStep: Math.max(PREFILL_TOKENS, maxBatch), maxRows: maxBatch, maxContext, maxDraftTokens: 0, kernels }); // no drafts here either
  const shape = workShape(model);
  const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };
  const row = (r: number, startPos: number, numTokens: number): StepRow => ({
    sessionId: `s${r}`,
    tokenIds: Int32Array.from({ length: numTokens }, (_, j) => (r * 13 + j * 7 + 1) % model.config.vocabSize),
    startPos,
    blockTables: [Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b)],
    sampling,
    sample: true,
  });
  const cases: { name: string; rows: StepRow[] }[] = [
    { name: `prefill ${PREFILL_TOKENS} tok @ ctx ${PREFILL_CONTEXT}`, rows: [row(0, PREFILL_CONTEXT - PREFILL_TOKENS, PREFILL_TOKENS)] },
    ...BATCHES.map((b) => ({ name: `decode B=${b} @ ctx ${DECODE_CONTEXT}`, rows: Array.from({ length: b }, (_, r) => row(r, DECODE_CONTEXT - 1, 1)) })),
  ];
  const points: OpClassPoint[] = [];
  try {
    let stepIndex = 0;
    for (const { name, rows } of cases) {
      const plan: StepPlan = { stepIndex: stepIndex++, rows };
      await runner.execute(plan); // warm-up
      const attentionMs: number[] = [];
      const matmulMs: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        const ops = opTotals(await profileStep(runner, { ...plan, stepIndex: stepIndex++ }));
        attentionMs.push((ops.attention ?? 0) + (ops.attention_merge ?? 0));
        matmulMs.push(Object.entries(ops).reduce((n, [op, ms]) => n + (isMatmulOp(op) ? ms : 0), 0));
      }
      const tokens = rows.reduce((n, r) => n + r.tokenIds.length, 0);
      const attention = { ms: median(attentionMs), ...attentionWork(shape, rows.map((r) => ({ startPos: r.startPos, numTokens: r.tokenIds.length })), 1) }; // every query reads its own keys
      const matmul = { ms: median(matmulMs), ...matmulWork(shape, tokens, rows.length) };
      points.push({ case: name, attention, matmul });
      console.log(`${model.source} ${name}: attention ${attention.ms.toFixed(1)} ms, matmul ${matmul.ms.toFixed(1)} ms`);
    }
    return points;
  } finally {
    runner.dispose();
  }
}

async function main(): Promise<void> {
  const { adapter, machine, device } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  let roofline: RooflineSection | undefined;
  const onCpu = runsOnCpu(device);
  const models = rooflineModels(onCpu);
  if (models.length > 0) {
    const measured = await rooflineSweep(await testPipelineCache(), {
      models,
      dtypes: rooflineDtypes(onCpu),
      tokens: [1, 8],
      settings: ['gpu', 'cpu'],
      repeats: REPEATS,
      copyBytes: (onCpu ? 64 : 512) * 2 ** 20,
      log: console.log,
    });
    roofline = { ...measured, launchShortfalls: Object.fromEntries(models.map((m) => [m, launchShortfalls(MODEL_SHAPES[m]!)])) };
  }
  let stepOps: StepOpPoint[] | undefined;
  if (roofline && STEP_OPS_MODEL) {
    const copyGbs = roofline.copy.gbs;
    stepOps = await stepOpsSweep(await testPipelineCache(), { model: STEP_OPS_MODEL, settings: ['gpu', 'cpu'], contexts: [1024, 4096], batches: [1, 8], repeats: REPEATS, copyGbs, log: console.log });
  }
  const sweeps: ModelSweep[] = [];
  // both settings side by side on a GPU; a CPU adapter's own by default (the 'gpu' one runs ~5x slower there)
  const settings = (process.env.COHORT_BENCH_KERNEL_SETTINGS ?? (onCpu ? 'cpu' : 'gpu,cpu')).split(',').filter(Boolean) as KernelSetting[];
  for (const kernels of settings) {
    const tag = settings.length > 1 ? ` [${kernels}]` : ''; // one setting: names as before, so bench:baseline pairs them with older reports
    for (const spec of MODELS) sweeps.push(await sweep(spec, kernels, tag));
    for (const spec of WINDOW_MODELS) sweeps.push(await windowSweep(spec, kernels, tag));
  }
  const date = new Date().toISOString().slice(0, 10);
  const note = process.env.COHORT_BENCH_NOTE;
  const report: KernelBenchReport = { schema: 1, date, machine, adapter, repeats: REPEATS, ...(note ? { note } : {}), sweeps, ...(roofline ? { roofline } : {}), ...(stepOps ? { stepOps } : {}) };
  const dir = process.env.COHORT_BENCH_RESULTS_DIR ?? repoPath('bench/results');
  mkdirSync(dir, { recursive: true });
  const base = `${dir}/${date}-${machine}-kernels`;
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${base}.md`, renderKernelMarkdown(report));
  console.log(renderKernelMarkdown(report));
  console.log(`wrote ${base}.{json,md}`);
}

await main();
