// The KV capacity benchmark: for the embedded model and the shapes of SmolLM2-360M, Qwen2.5-0.5B and
// Llama-3.2-1B, the most sessions of 2k and 4k tokens one pool holds in f32, f16 and q8_0, each pool
// planned by planKvArena, allocated on the Node WebGPU device and filled through the engine's own
// scheduler and block pool, beside llama.cpp's KV bytes per token from a real context of each shape.
// Writes bench/results/<date>-kv-capacity.{json,md}; exits 1 when a check fails. No kernels run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import { EngineCore } from '../src/engine/engine-core';
import { FakeRunner } from '../src/engine/testing/fake-runner';
import { ByteTokenizer, PlainChatTemplate } from '../src/engine/testing/test-support';
import { KvArena, planKvArena, type KvArenaLimits, type KvShape } from '../src/gpu/kv-arena';
import { repoPath } from '../src/gpu/testing/node-gpu';
import type { ModelConfig } from '../src/model/desc';
import { configFromHf } from '../src/model/hf-config';
import { KV_CACHE_TYPES, kvBytesPerToken, type KvCacheType } from '../src/engine/kv-types';
import { DEFAULT_KV_BLOCK_SIZE, sessionsThatFit } from '../src/protocol/kv-options';
import { MODEL_SHAPES } from '../tools/models/published-shapes';
import { writeSyntheticModel } from '../src/model/testing/synthetic-model-fixtures';
import { capacityChecks, renderCapacityMarkdown, type CapacityModel, type CapacityPoint, type CapacityReport } from './capacity-report';
import { nodeBenchDevice } from './node-device';

const BUDGET_BYTES = Number(process.env.COHORT_BENCH_KV_BYTES ?? 2 * 2 ** 30);
const SESSION_TOKENS = [2048, 4096];
const BLOCK_SIZE = DEFAULT_KV_BLOCK_SIZE;
const SHAPES = ['SmolLM2-360M', 'Qwen2.5-0.5B', 'Llama-3.2-1B'];
/** Cells of each llama.cpp context: its log gives MiB to 2 decimals, exact per token at this many. */
const LLAMA_CELLS = 8192;
/** Each KV buffer at most this: SwiftShader refuses a 1 GiB buffer (an allocation just past its limit once Dawn pads it) though it reports a larger maxBufferSize. */
const MAX_KV_BUFFER_BYTES = 512 * 2 ** 20;
const GGML_NAMES: Record<KvCacheType, 'F32' | 'F16' | 'Q8_0'> = { f32: 'F32', f16: 'F16', q8_0: 'Q8_0' };

function models(): { name: string; config: ModelConfig; gguf?: string }[] {
  const embedded = repoPath('public/models/cohort-tiny');
  const config = configFromHf('config.json', JSON.parse(readFileSync(join(embedded, 'config.json'), 'utf8')));
  return [{ name: 'cohort-tiny (embedded)', config, gguf: join(embedded, 'cohort-tiny-f32.gguf') }, ...SHAPES.map((name) => ({ name, config: MODEL_SHAPES[name]! }))];
}

/**
 * The pool planned, then allocated on the device for real (its buffers' bytes; null when the device
 * refused it). In a child process of its own: SwiftShader keeps a destroyed buffer's memory until
 * the process ends, and a dozen 2 GiB pools in one process would fill this machine.
 */
function allocate(shape: KvShape, limits: KvArenaLimits): { numBlocks: number; allocatedBytes: number | null } {
  const plan = planKvArena(shape, limits, BUDGET_BYTES);
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), `--arena=${JSON.stringify({ shape, limits })}`], { encoding: 'utf8', env: process.env });
  const answer = child.stdout.split('\n').find((l) => l.startsWith('arena '));
  if (!answer) throw new Error(`the arena child failed (status ${child.status}): ${child.stderr.slice(-2000)}`);
  const { allocatedBytes, error } = JSON.parse(answer.slice(6)) as { allocatedBytes: number | null; error: string | null };
  if (error) console.log(`arena of ${plan.numBlocks} blocks refused: ${error}`);
  return { numBlocks: plan.numBlocks, allocatedBytes };
}

/** The child's side: allocate the planned arena on the Node WebGPU device, say its bytes, exit. */
async function allocateHere(request: { shape: KvShape; limits: KvArenaLimits }): Promise<void> {
  const { device } = await nodeBenchDevice();
  const plan = planKvArena(request.shape, request.limits, BUDGET_BYTES);
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  const arena = new KvArena(device, request.shape, plan);
  const bytes = arena.buffers.reduce((n, b) => n + b.size, 0);
  const refused = (await device.popErrorScope()) ?? (await device.popErrorScope());
  arena.destroy();
  console.log(`arena ${JSON.stringify({ allocatedBytes: refused ? null : bytes, error: refused?.message ?? null })}`);
  process.exit(0);
}

/**
 * Fills a pool of `numBlocks` through EngineCore: one session more than fit, each a prompt of
 * tokens - 1 distinct ids and 2 new tokens, every prompt in one step's budget. The second step's
 * decode rows at position tokens - 1 are the sessions holding their full length at once.
 */
async function admit(numBlocks: number, tokens: number, expected: number): Promise<{ admitted: number; nextWaited: boolean }> {
  const sessions = expected + 1;
  const budget = sessions * tokens;
  const runner = new FakeRunner({ blockSize: BLOCK_SIZE, numBlocks, maxTokensPerStep: budget, maxRows: sessions, eosEvery: 0 }); // samples a..z, never EOS
  const engine = new EngineCore({ runner, tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate(), maxTokensPerStep: budget, maxRows: sessions, enablePrefixCaching: false, stepBudget: null, manualSteps: true });
  for (let s = 0; s < sessions; s++) {
    const id = engine.createSession({ maxNewTokens: 2, sampling: { temperature: 0 } });
    // distinct per session, so nothing could be shared even with prefix caching on
    engine.send(id, Array.from({ length: tokens - 1 }, (_, i) => (s * 7 + i * 13 + (i >> 8)) % 256));
  }
  let admitted = 0;
  let nextWaited = false;
  for (let step = 0; step < 2; step++) {
    const event = await engine.step();
    if (!event) break;
    if (step === 0) nextWaited = event.queueDepth > 0;
    admitted = Math.max(admitted, event.rows.filter((r) => r.kind === 'decode' && r.position === tokens - 1).length);
  }
  await engine.dispose();
  return { admitted, nextWaited };
}

/** llama.cpp's KV bytes per token for this shape: a real context of LLAMA_CELLS cells from a GGUF with the same attention shape (weights tiny where synthetic). */
async function llamaCppBytesPerToken(llama: Llama, lines: string[], config: ModelConfig, gguf: string | undefined, scratch: string): Promise<Record<KvCacheType, number | null>> {
  let path = gguf;
  if (!path) {
    // KV size depends on layers, KV heads and head size only: hidden, FFN and vocab shrink to keep the file small
    const dir = join(scratch, `${config.numLayers}-${config.numKvHeads}-${config.headDim}`);
    writeSyntheticModel({ arch: 'llama', format: 'gguf', dtype: 'f32', dir, seed: 1, dims: { hidden: 64, intermediate: 64, layers: config.numLayers, heads: config.numHeads, kvHeads: config.numKvHeads, headDim: config.headDim, vocab: 259, maxPositions: 8192 } });
    path = join(dir, 'model.gguf');
  }
  const model = await llama.loadModel({ modelPath: path });
  const out = {} as Record<KvCacheType, number | null>;
  for (const type of KV_CACHE_TYPES) {
    lines.length = 0;
    const ggml = GGML_NAMES[type];
    // quantized V needs flash attention in llama.cpp
    const context = await model.createContext({ contextSize: LLAMA_CELLS, sequences: 1, flashAttention: true, experimentalKvCacheKeyType: ggml, experimentalKvCacheValueType: ggml });
    // the log reaches the logger asynchronously: wait for this context's size line
    const pattern = new RegExp(`llama_kv_cache: size =\\s*([\\d.]+) MiB \\(\\s*(\\d+) cells.*K \\(${type}\\)`);
    let m: RegExpMatchArray | null = null;
    for (let waited = 0; !m && waited < 5000; waited += 50) {
      m = lines.map((l) => l.match(pattern)).find((x) => x) ?? null;
      if (!m) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    out[type] = m ? Math.round((Number(m[1]) * 2 ** 20) / Number(m[2])) : null;
    await context.dispose();
  }
  await model.dispose();
  return out;
}

async function main(): Promise<void> {
  const { device, adapter } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const limits: KvArenaLimits = { maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize, maxBufferSize: Math.min(device.limits.maxBufferSize, MAX_KV_BUFFER_BYTES), minStorageBufferOffsetAlignment: device.limits.minStorageBufferOffsetAlignment };
  const lines: string[] = [];
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.info, logger: (_level, message) => lines.push(message) });
  const scratch = mkdtempSync(join(tmpdir(), 'cohort-kv-capacity-'));
  const report: CapacityReport = { date: new Date().toISOString().slice(0, 10), budgetBytes: BUDGET_BYTES, blockSize: BLOCK_SIZE, adapter, maxKvBufferBytes: limits.maxBufferSize, llamaCpp: `node-llama-cpp 3.21.1, CPU, flash attention on, ${LLAMA_CELLS} cells`, models: [], points: [] };
  try {
    for (const { name, config, gguf } of models()) {
      const entry: CapacityModel = {
        model: name, numLayers: config.numLayers, numKvHeads: config.numKvHeads, headDim: config.headDim,
        cohortBytesPerToken: Object.fromEntries(KV_CACHE_TYPES.map((t) => [t, kvBytesPerToken(config, t)])) as Record<KvCacheType, number>,
        llamaCppBytesPerToken: await llamaCppBytesPerToken(llama, lines, config, gguf, scratch),
      };
      report.models.push(entry);
      for (const type of KV_CACHE_TYPES) {
        const shape: KvShape = { numLayers: config.numLayers, blockSize: BLOCK_SIZE, kvDim: config.numKvHeads * config.headDim, kvCacheType: type };
        const { numBlocks, allocatedBytes } = allocate(shape, limits);
        for (const tokens of SESSION_TOKENS) {
          const expectedSessions = sessionsThatFit(numBlocks, BLOCK_SIZE, tokens);
          const { admitted, nextWaited } = await admit(numBlocks, tokens, expectedSessions);
          const p: CapacityPoint = { model: name, kvCacheType: type, sessionTokens: tokens, numBlocks, allocatedBytes, expectedSessions, admittedSessions: admitted, nextWaited };
          report.points.push(p);
          console.log(`${name} ${type} @${tokens}: ${numBlocks} blocks, ${allocatedBytes ?? 'not'} bytes allocated, ${admitted}/${expectedSessions} sessions, next waited ${nextWaited}`);
        }
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const out = process.env.COHORT_BENCH_OUT ?? repoPath('bench/results');
  mkdirSync(out, { recursive: true });
  const base = join(out, `${report.date}-kv-capacity`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  const markdown = renderCapacityMarkdown(report);
  writeFileSync(`${base}.md`, markdown);
  console.log(markdown);
  process.exit(capacityChecks(report).every((c) => c.ok) ? 0 : 1);
}

const arenaArg = process.argv.find((a) => a.startsWith('--arena='));
if (arenaArg) await allocateHere(JSON.parse(arenaArg.slice('--arena='.length)) as { shape: KvShape; limits: KvArenaLimits });
else await main();
