// The held-out NIAH set (tools/train/eval/niah-reference.json) through EngineCore once per KV cache
// storage type, every prompt a session of one batched run, greedy, 24 new tokens at most; scored by
// kv-eval.ts against the first type's run. Not a speed benchmark. Writes tools/train/eval/kv-types[-gpu].{json,md}.
// Env: COHORT_EVAL_KV_TYPES (default f32,f16,q8_0), COHORT_EVAL_PROMPTS (a count), COHORT_EVAL_RUNNER (cpu | gpu: npm webgpu).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EngineCore } from '../../src/engine/engine-core';
import { chatTemplateFromTokenizerConfig } from '../../src/model/chat-template';
import { loadHfModel } from '../../src/model/hf-loader';
import { isKvCacheType, type KvCacheType } from '../../src/engine/kv-types';
import { HfTokenizer } from '../../src/model/tokenizer';
import { NIAH_MAX_NEW_TOKENS } from '../../src/protocol/niah';
import type { ModelRunner } from '../../src/engine/types';
import { GpuRunner } from '../../src/gpu/gpu-runner';
import { testPipelineCache } from '../../src/gpu/testing/kernel-harness';
import { loadShader } from '../../src/gpu/testing/node-gpu';
import { CpuRunner } from '../../src/reference/cpu-runner';
import { folderOpener } from '../models/node-files';
import { kvEvalMarkdown, scoreKvType, type KvEvalOutput, type KvTypeScore } from './kv-eval';

const MODEL_DIR = 'public/models/cohort-tiny';
const REFERENCE_FILE = 'tools/train/eval/niah-reference.json';
const BLOCK_SIZE = 16;
const RUNNER = process.env.COHORT_EVAL_RUNNER ?? 'cpu';
if (RUNNER !== 'cpu' && RUNNER !== 'gpu') throw new Error(`COHORT_EVAL_RUNNER: ${RUNNER} is not cpu or gpu`);
const OUT = RUNNER === 'gpu' ? 'tools/train/eval/kv-types-gpu' : 'tools/train/eval/kv-types';

interface Reference {
  code: string;
  prompt_ids: number[];
  output_ids: number[];
}

const typeList = (process.env.COHORT_EVAL_KV_TYPES ?? 'f32,f16,q8_0').split(',');
const types = typeList.filter(isKvCacheType);
if (types.length !== typeList.length || types.length === 0) throw new Error(`COHORT_EVAL_KV_TYPES: ${typeList.join(',')} names a type that is not f32, f16 or q8_0`);
const allRefs = JSON.parse(readFileSync(REFERENCE_FILE, 'utf8')) as Reference[];
const refs = allRefs.slice(0, Number(process.env.COHORT_EVAL_PROMPTS ?? allRefs.length));

const readJson = (name: string) => JSON.parse(readFileSync(join(MODEL_DIR, name), 'utf8')) as Record<string, unknown>;
const model = await loadHfModel(folderOpener(MODEL_DIR), { source: 'cohort-tiny (embedded, F32 safetensors)' });
const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: readJson('tokenizer.json'), tokenizerConfig: readJson('tokenizer_config.json') });
const chatTemplate = chatTemplateFromTokenizerConfig(readJson('tokenizer_config.json'));
// Room for every session's prompt and answer at once (plus the reserved block 0): no preemption.
const numBlocks = 1 + refs.reduce((n, r) => n + Math.ceil((r.prompt_ids.length + NIAH_MAX_NEW_TOKENS) / BLOCK_SIZE), 0);

const pipelines = RUNNER === 'gpu' ? await testPipelineCache() : null;
const maxContext = Math.max(...refs.map((r) => r.prompt_ids.length)) + NIAH_MAX_NEW_TOKENS;

async function makeRunner(kvCacheType: KvCacheType): Promise<ModelRunner & { dispose(): void }> {
  if (!pipelines) return new CpuRunner(model, { blockSize: BLOCK_SIZE, numBlocks, kvCacheType });
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks, maxContext, kvCacheType });
}

interface TypeRun {
  outputs: KvEvalOutput[];
  seconds: number;
  steps: number;
  maxRows: number;
}

async function runType(kvCacheType: KvCacheType): Promise<TypeRun> {
  const runner = await makeRunner(kvCacheType);
  // Speculation off: drafts change which rows a step carries, never the greedy tokens, and cost CPU time.
  const engine = new EngineCore({ runner, tokenizer, chatTemplate, mode: 'batched', speculation: 'off' });
  let steps = 0;
  let maxRows = 0;
  const unsubscribe = engine.subscribe((event) => {
    steps++;
    maxRows = Math.max(maxRows, event.rows.length);
    if (steps % 50 === 0) console.log(`  ${kvCacheType}: step ${steps}, ${event.rows.length} rows`);
  });
  const t0 = performance.now();
  try {
    // The reference ids are already chat-templated: sent as tokens, they reach the runner as they are.
    const ids = refs.map(() => engine.createSession({ maxNewTokens: NIAH_MAX_NEW_TOKENS, sampling: { temperature: 0 }, speculation: 'off' }));
    ids.forEach((id, i) => engine.send(id, refs[i]!.prompt_ids));
    const results = await Promise.all(ids.map((id) => engine.waitForTurn(id)));
    const outputs = results.map((r, i): KvEvalOutput => {
      if (r.finishReason === 'error') throw new Error(`${kvCacheType} ${refs[i]!.code}: ${r.error}`);
      return { code: refs[i]!.code, promptTokens: r.promptTokenIds.length, outputTokenIds: r.outputTokenIds, text: r.text, referenceTokenIds: refs[i]!.output_ids };
    });
    return { outputs, seconds: (performance.now() - t0) / 1000, steps, maxRows };
  } finally {
    unsubscribe();
    await engine.dispose();
    runner.dispose();
  }
}

const runs = new Map<KvCacheType, TypeRun>();
for (const type of types) {
  console.log(`${type}: ${refs.length} prompts, ${numBlocks} KV blocks`);
  const run = await runType(type);
  runs.set(type, run);
  console.log(`${type}: ${run.seconds.toFixed(0)} s, ${run.steps} steps, up to ${run.maxRows} rows a step`);
}
const baseline = runs.get(types[0]!)!.outputs;
const scores: KvTypeScore[] = types.map((t) => scoreKvType(t, runs.get(t)!.outputs, baseline, runs.get(t)!.seconds));

const date = new Date().toISOString().slice(0, 10);
const subset = refs.length < allRefs.length ? ` (the first ${refs.length} of ${allRefs.length})` : '';
const note =
  `${date}. ${model.source}; the ${refs.length} held-out NIAH prompts of ${REFERENCE_FILE}${subset} as sessions of one batched ` +
  `EngineCore run on ${RUNNER === 'gpu' ? `GpuRunner (Node, npm webgpu: ${pipelines!.device.adapterInfo?.description || 'adapter'})` : "CpuRunner (the GPU kernels' twin: KV values rounded as GpuRunner stores them)"}, one run per KV type; ` +
  `greedy, at most ${NIAH_MAX_NEW_TOKENS} new tokens, speculation off. Recall: output holds the prompt's exact code; ` +
  `leaks: output holds another prompt's code. Agreement is with the ${types[0]} run (token agreement: output tokens equal ` +
  `up to the first difference, over its output tokens) and with PyTorch's greedy tokens. Seconds: the run's wall ` +
  `time on a shared machine, not a speed measure. \`${RUNNER === 'gpu' ? 'COHORT_EVAL_RUNNER=gpu ' : ''}npm run eval:kv\`.`;
const md = kvEvalMarkdown(scores, `Held-out NIAH recall per KV cache storage type (cohort-tiny, ${RUNNER === 'gpu' ? 'GpuRunner' : 'CpuRunner'})`, note);
const report = {
  schema: 1,
  date,
  model: model.source,
  referenceFile: REFERENCE_FILE,
  maxNewTokens: NIAH_MAX_NEW_TOKENS,
  runner: RUNNER === 'gpu' ? 'GpuRunner' : 'CpuRunner',
  baseline: types[0],
  scores: scores.map((s) => ({ ...s, steps: runs.get(s.kvCacheType as KvCacheType)!.steps, maxRowsPerStep: runs.get(s.kvCacheType as KvCacheType)!.maxRows })),
  outputs: Object.fromEntries(types.map((t) => [t, runs.get(t)!.outputs.map((o) => ({ code: o.code, promptTokens: o.promptTokens, outputTokenIds: o.outputTokenIds, text: o.text }))])),
};
writeFileSync(`${OUT}.json`, JSON.stringify(report, null, 1) + '\n');
writeFileSync(`${OUT}.md`, md);
console.log(md);
console.log(`wrote ${OUT}.{json,md}`);
