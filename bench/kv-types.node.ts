// KV cache storage types side by side: the decode step at NIAH length (context 1,230) with the pool
// in f32, f16 and q8_0, one GpuRunner per type, steps interleaved type by type in every repeat so
// the ratios share the machine's conditions; also attention's own GPU time per type. Node on the
// npm webgpu adapter (SwiftShader unless COHORT_GPU=native). Not a capacity benchmark: every
// pool holds the same blocks. Writes bench/results/<date>-<machine>-kv-types.{json,md}.
import { mkdirSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { StepPlan, StepRow } from '../src/engine/types';
import { loadHfModel } from '../src/model/hf-loader';
import { isKvCacheType, kvBytesPerToken, type KvCacheType } from '../src/engine/kv-types';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { testPipelineCache } from '../src/gpu/testing/kernel-harness';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { profileStep } from '../src/gpu/testing/step-probe';
import { folderOpener } from '../tools/models/node-files';
import { publishedShapeModel } from '../tools/models/published-shapes';
import { median } from '../src/protocol/metrics';
import { nodeBenchDevice } from './node-device';
import { opTotals } from './kernel-report';

const TYPES = (process.env.COHORT_BENCH_KV_TYPES ?? 'f32,f16,q8_0').split(',').filter(isKvCacheType);
const BATCHES = (process.env.COHORT_BENCH_BATCHES ?? '1,8').split(',').map(Number);
const REPEATS = Number(process.env.COHORT_BENCH_REPEATS ?? 5);
const MODEL = process.env.COHORT_BENCH_MODEL ?? 'cohort-tiny';
const BLOCK_SIZE = 16;
const DECODE_CONTEXT = 1230;

interface Point {
  kvCacheType: KvCacheType;
  batch: number;
  stepMs: number;
  gpuMs: number | null;
  attentionMs: number;
  /** rope_kv_write's GPU time per step (where the rounding to the type happens), summed over layers */
  kvWriteMs: number;
  /** Every dispatch of the profiled step, each timed in its own pass, summed */
  profiledMs: number;
  /** stepMs over f32's at the same batch */
  stepRatio: number;
  attentionRatio: number;
}

async function main(): Promise<void> {
  const { adapter, machine } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const model = MODEL === 'cohort-tiny'
    ? await loadHfModel(folderOpener(repoPath('public/models/cohort-tiny')), { source: 'cohort-tiny (embedded, f32)' })
    : publishedShapeModel(MODEL.split(':')[0]!, MODEL.split(':')[1] === 'q4_0' ? 'q4_0' : 'q8_0');
  const pipelines = await testPipelineCache();
  const maxBatch = Math.max(...BATCHES);
  const maxContext = DECODE_CONTEXT + BLOCK_SIZE;
  const blocksPerRow = Math.ceil(maxContext / BLOCK_SIZE);
  const runners = new Map<KvCacheType, GpuRunner>();
  for (const kvCacheType of TYPES) {
    runners.set(kvCacheType, await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + maxBatch * blocksPerRow, maxTokensPerStep: maxBatch, maxRows: maxBatch, maxContext, kvCacheType }));
  }
  const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };
  // decode rows at context 1,230; the cache holds no real history (timing does not depend on its values)
  const plan = (batch: number, stepIndex: number): StepPlan => ({
    stepIndex,
    rows: Array.from({ length: batch }, (_, r): StepRow => ({
      sessionId: `s${r}`,
      tokenIds: Int32Array.of((r * 13 + 1) % model.config.vocabSize),
      startPos: DECODE_CONTEXT - 1,
      blockTables: [Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b)],
      sampling,
      sample: true,
    })),
  });
  const points: Point[] = [];
  try {
    let stepIndex = 0;
    for (const batch of BATCHES) {
      const wall = new Map<KvCacheType, number[]>(TYPES.map((t) => [t, []]));
      const gpu = new Map<KvCacheType, number[]>(TYPES.map((t) => [t, []]));
      const attention = new Map<KvCacheType, number[]>(TYPES.map((t) => [t, []]));
      const kvWrite = new Map<KvCacheType, number[]>(TYPES.map((t) => [t, []]));
      const profiled = new Map<KvCacheType, number[]>(TYPES.map((t) => [t, []]));
      for (const runner of runners.values()) await runner.execute(plan(batch, stepIndex++)); // warm-up
      for (let i = 0; i < REPEATS; i++) {
        for (const [type, runner] of runners) {
          const t0 = performance.now();
          const result = await runner.execute(plan(batch, stepIndex++));
          wall.get(type)!.push(performance.now() - t0);
          if (result.gpuTimeMs !== undefined) gpu.get(type)!.push(result.gpuTimeMs);
          const ops = opTotals(await profileStep(runner, plan(batch, stepIndex++)));
          attention.get(type)!.push(ops.attention ?? 0);
          kvWrite.get(type)!.push(ops.rope_kv_write ?? 0);
          profiled.get(type)!.push(Object.values(ops).reduce((a, b) => a + b, 0));
        }
      }
      const base = { step: median(wall.get(TYPES[0]!)!), attention: median(attention.get(TYPES[0]!)!) };
      for (const type of TYPES) {
        const stepMs = median(wall.get(type)!);
        const attentionMs = median(attention.get(type)!);
        const gpuTimes = gpu.get(type)!;
        points.push({ kvCacheType: type, batch, stepMs, gpuMs: gpuTimes.length ? median(gpuTimes) : null, attentionMs, kvWriteMs: median(kvWrite.get(type)!), profiledMs: median(profiled.get(type)!), stepRatio: stepMs / base.step, attentionRatio: attentionMs / base.attention });
        console.log(`${type} B=${batch}: step ${stepMs.toFixed(1)} ms (x${(stepMs / base.step).toFixed(2)}), attention ${attentionMs.toFixed(1)} ms (x${(attentionMs / base.attention).toFixed(2)})`);
      }
    }
  } finally {
    for (const runner of runners.values()) runner.dispose();
  }
  const c = model.config;
  const bytesPerToken = Object.fromEntries(TYPES.map((t) => [t, kvBytesPerToken({ numLayers: c.numLayers, numKvHeads: c.numKvHeads, headDim: c.headDim }, t)]));
  const date = new Date().toISOString().slice(0, 10);
  const note = process.env.COHORT_BENCH_NOTE;
  const report = { schema: 1, date, machine, adapter, model: model.source, context: DECODE_CONTEXT, repeats: REPEATS, ...(note ? { note } : {}), bytesPerToken, points };
  const lines = [
    `# KV cache storage types: decode at context ${DECODE_CONTEXT} (${date}, ${machine})`,
    '',
    `${adapter}; ${model.source}; median of ${REPEATS} interleaved repeats; ratios against ${TYPES[0]} at the same batch.${note ? ` ${note}` : ''}`,
    '',
    '| KV type | bytes/token | B | step ms | step ratio | attention ms | attention ratio | KV write ms | all dispatches ms (profiled) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...points.map((p) => `| ${p.kvCacheType} | ${bytesPerToken[p.kvCacheType]} | ${p.batch} | ${p.stepMs.toFixed(1)} | ${p.stepRatio.toFixed(2)} | ${p.attentionMs.toFixed(1)} | ${p.attentionRatio.toFixed(2)} | ${p.kvWriteMs.toFixed(2)} | ${p.profiledMs.toFixed(1)} |`),
    '',
  ];
  const dir = process.env.COHORT_BENCH_RESULTS_DIR ?? repoPath('bench/results');
  mkdirSync(dir, { recursive: true });
  const out = `${dir}/${date}-${machine}-kv-types`;
  writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${out}.md`, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${out}.{json,md}`);
}

await main();
