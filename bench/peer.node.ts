// `npm run bench:peer`: Cohort (GpuRunner in Node on npm webgpu) against llama.cpp (node-llama-cpp's Vulkan build on the
// same GPU, else its CPU build) on one random-weight GGUF per published shape and type, decode at batch 1 and batched
// aggregate at 8, 16 and 64 sequences, runs interleaved engine by engine. Asserts nothing; writes bench/results/.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LlamaModel } from 'node-llama-cpp';
import type { StepRow } from '../src/engine/types';
import { runsOnCpu } from '../src/gpu/device';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import type { ModelDesc } from '../src/model/desc';
import { loadGgufModel } from '../src/model/gguf-loader';
import type { MeasuredStep } from '../src/protocol/metrics';
import { fileSource } from '../tools/models/node-files';
import { matrixType, writePublishedShapeGguf } from '../tools/models/published-gguf';
import { MODEL_SHAPES, type RandomMatrixType } from '../tools/models/published-shapes';
import { nodeBenchDevice, webgpuVersion } from './node-device';
import { bindingVersion, llamaRun, openLlamaPeer, type LlamaRunSpec } from './peer-llama';
import { engineRun, peerPoint, renderPeerMarkdown, type EngineRun, type PeerBenchReport, type PeerModel, type PeerPoint } from './peer-report';

const usage = `Usage: npm run bench:peer   (settings by environment)
  COHORT_PEER_MODELS        SHAPE:TYPE,... TYPE q4_K, q8_0 or q4_0 (default on a GPU: Llama-3.2-1B, Qwen2.5-0.5B
                            and Gemma-3-1B in q4_K and q8_0; on a CPU adapter: SmolLM2-135M:q4_K)
  COHORT_PEER_BATCHES       sequences decoding together (default 1,8,16,64)
  COHORT_PEER_PROMPT_TOKENS prompt per sequence (default 32; CPU adapter 8)
  COHORT_PEER_DECODE_STEPS  timed decode steps per run (default 64; CPU adapter 4)
  COHORT_PEER_WARMUP_STEPS  untimed steps before them (default 4; CPU adapter 1)
  COHORT_PEER_REPEATS       interleaved runs per point, engines alternating first (default 3; CPU adapter 1)
  COHORT_PEER_LLAMA         vulkan (default: its Vulkan build, the CPU build where Vulkan has no device) or cpu
  COHORT_PEER_LLAMA_THREADS llama.cpp's threads (default node-llama-cpp's; 1 for the CPU build on 2 cores or fewer)
  COHORT_BENCH_RESULTS_DIR, COHORT_BENCH_MACHINE, COHORT_BENCH_NOTE as the other benches.
Writes <date>-<machine>-peer.{json,md}.`;

const BLOCK_SIZE = 16;
/** Most prompt tokens per Cohort prefill step (prefill is not timed; this bounds activation memory). */
const PREFILL_TOKENS_PER_STEP = 512;
const SAMPLING = { temperature: 0, topK: 0, topP: 1, seed: 0 };

interface Settings {
  models: Array<{ shape: string; dtype: RandomMatrixType }>;
  batches: number[];
  promptTokens: number;
  decodeSteps: number;
  warmUpSteps: number;
  repeats: number;
  llama: 'vulkan' | 'cpu';
  /** llama.cpp's threads; 0: node-llama-cpp's default (the machine's math cores). */
  llamaThreads: number;
}

function settingsFor(env: NodeJS.ProcessEnv, cpu: boolean): Settings {
  const num = (name: string, onGpu: number, onCpu: number): number => {
    const v = Number(env[name] ?? (cpu ? onCpu : onGpu));
    if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer\n${usage}`);
    return v;
  };
  const gpuModels = 'Llama-3.2-1B:q4_K,Llama-3.2-1B:q8_0,Qwen2.5-0.5B:q4_K,Qwen2.5-0.5B:q8_0,Gemma-3-1B:q4_K,Gemma-3-1B:q8_0';
  const models = (env.COHORT_PEER_MODELS ?? (cpu ? 'SmolLM2-135M:q4_K' : gpuModels)).split(',').filter(Boolean).map((spec) => {
    const [shape, dtype] = spec.split(':');
    if (!shape || !MODEL_SHAPES[shape] || (dtype !== 'q4_K' && dtype !== 'q8_0' && dtype !== 'q4_0')) throw new Error(`${spec}: use SHAPE:q4_K|q8_0|q4_0, SHAPE one of ${Object.keys(MODEL_SHAPES).join(', ')}`);
    return { shape, dtype: dtype as RandomMatrixType };
  });
  const batches = (env.COHORT_PEER_BATCHES ?? '1,8,16,64').split(',').map(Number);
  if (batches.some((b) => !Number.isInteger(b) || b < 1)) throw new Error(`COHORT_PEER_BATCHES: ${env.COHORT_PEER_BATCHES}`);
  const llama = env.COHORT_PEER_LLAMA ?? 'vulkan';
  if (llama !== 'vulkan' && llama !== 'cpu') throw new Error(`COHORT_PEER_LLAMA must be vulkan or cpu, not ${llama}`);
  return {
    models, batches, llama,
    promptTokens: num('COHORT_PEER_PROMPT_TOKENS', 32, 8),
    decodeSteps: num('COHORT_PEER_DECODE_STEPS', 64, 4),
    warmUpSteps: num('COHORT_PEER_WARMUP_STEPS', 4, 1),
    repeats: num('COHORT_PEER_REPEATS', 3, 1),
    llamaThreads: Number(env.COHORT_PEER_LLAMA_THREADS ?? 0),
  };
}

/** The same prompt ids for both engines: bytes of the byte-level vocabulary, different per sequence. */
function prompts(batch: number, length: number): number[][] {
  return Array.from({ length: batch }, (_, i) => Array.from({ length }, (_, j) => (i * 13 + j * 7 + 1) % 256));
}

/** Cohort's side: one runner per model, each run's sequences from position 0 on the same blocks. */
async function cohortRun(runner: GpuRunner, spec: LlamaRunSpec, blocksPerRow: number, stepIndex: { n: number }): Promise<EngineRun> {
  const rows = spec.prompts.map((prompt, r) => ({
    id: `s${r}`,
    pos: 0,
    next: prompt,
    blockTable: Int32Array.from({ length: blocksPerRow }, (_, b) => 1 + r * blocksPerRow + b),
  }));
  const row = (r: (typeof rows)[number]): StepRow => ({ sessionId: r.id, tokenIds: Int32Array.from(r.next), startPos: r.pos, blockTables: [r.blockTable], sampling: SAMPLING, sample: true });
  const execute = async (group: typeof rows): Promise<void> => {
    const { sampledIds } = await runner.execute({ stepIndex: stepIndex.n++, rows: group.map(row) });
    group.forEach((r, i) => {
      r.pos += r.next.length;
      r.next = [sampledIds[i]! >= 0 ? sampledIds[i]! : 0];
    });
  };
  const perPrefill = Math.max(1, Math.floor(PREFILL_TOKENS_PER_STEP / spec.prompts[0]!.length));
  for (let at = 0; at < rows.length; at += perPrefill) await execute(rows.slice(at, at + perPrefill));
  for (let i = 0; i < spec.warmUpSteps; i++) await execute(rows);
  const steps: MeasuredStep[] = [];
  for (let i = 0; i < spec.decodeSteps; i++) {
    const startedAtMs = performance.now();
    await execute(rows);
    steps.push({ startedAtMs, elapsedMs: performance.now() - startedAtMs, rows: rows.map((r) => ({ sessionId: r.id, kind: 'decode' as const, numTokens: 1, newTokenIds: r.next })) });
  }
  return engineRun(steps);
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) return void console.log(usage);
  const startedAtMs = Date.now();
  const { device, adapter, machine } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const settings = settingsFor(process.env, runsOnCpu(device));
  console.log(`peer bench on ${adapter}; ${JSON.stringify(settings)}`);
  const peer = await openLlamaPeer(settings.llama);
  console.log(`llama.cpp: ${peer.backend} build${peer.devices.length ? ` on ${peer.devices.join(', ')}` : ''}${peer.fallback ? ` (${peer.fallback})` : ''}`);
  const release = peer.llama.llamaCppRelease;
  // On two cores a second spinning thread stalls llama.cpp's threadpool (30x slower here), as bench:server found
  const llamaThreads = settings.llamaThreads || (peer.backend === 'cpu' && availableParallelism() <= 2 ? 1 : 0);
  const maxBatch = Math.max(...settings.batches);
  const positions = settings.promptTokens + settings.warmUpSteps + settings.decodeSteps + 1;
  const blocksPerRow = Math.ceil(positions / BLOCK_SIZE);
  const dir = mkdtempSync(join(tmpdir(), 'cohort-peer-'));
  const models: PeerModel[] = [];
  const points: PeerPoint[] = [];
  const skipped: string[] = [];
  let flashAttention = 'auto';
  try {
    for (const { shape, dtype } of settings.models) {
      const path = join(dir, `${shape}-${dtype}.gguf`);
      const ggufBytes = writePublishedShapeGguf(path, shape, dtype);
      const config = MODEL_SHAPES[shape]!;
      const matrixTypes = [...new Set([config.hiddenSize, config.intermediateSize].map((cols) => matrixType(dtype, cols)))];
      let llamaModel: LlamaModel;
      try {
        llamaModel = await peer.llama.loadModel({ modelPath: path, gpuLayers: peer.backend === 'vulkan' ? 'max' : 0 });
      } catch (error) {
        skipped.push(`${shape} ${dtype}: llama.cpp did not load it (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
        console.log(skipped[skipped.length - 1]);
        rmSync(path, { force: true });
        continue;
      }
      const desc: ModelDesc = (await loadGgufModel(fileSource(path, `${shape}-${dtype}.gguf`))).desc;
      const runner = await GpuRunner.create({
        device, model: desc, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 1 + maxBatch * blocksPerRow,
        maxTokensPerStep: Math.max(maxBatch, Math.min(PREFILL_TOKENS_PER_STEP, maxBatch * settings.promptTokens)),
        maxRows: maxBatch, maxContext: blocksPerRow * BLOCK_SIZE, maxDraftTokens: 0,
        // every run ends inside Gemma's 512-position window: one pool, the window only masking, is the same work
        windowKv: false,
      });
      models.push({ shape, dtype, ggufBytes, matrixTypes });
      flashAttention = String(llamaModel.defaultContextFlashAttention);
      try {
        const runs = new Map<number, { cohort: EngineRun[]; llama: EngineRun[] }>(settings.batches.map((b) => [b, { cohort: [], llama: [] }]));
        const stepIndex = { n: 0 };
        for (let repeat = 0; repeat < settings.repeats; repeat++) {
          for (const batch of settings.batches) {
            const spec: LlamaRunSpec = { batch, prompts: prompts(batch, settings.promptTokens), warmUpSteps: settings.warmUpSteps, decodeSteps: settings.decodeSteps };
            const got = runs.get(batch)!;
            const sides = [
              async () => got.cohort.push(await cohortRun(runner, spec, blocksPerRow, stepIndex)),
              async () => got.llama.push(await llamaRun(llamaModel, spec, positions, Math.max(512, batch), llamaThreads || undefined)),
            ];
            for (const side of repeat % 2 === 0 ? sides : sides.reverse()) await side();
            const [c, l] = [got.cohort[got.cohort.length - 1]!, got.llama[got.llama.length - 1]!];
            console.log(`${shape} ${dtype} B=${batch} run ${repeat + 1}: Cohort ${c.tokensPerSec.toFixed(1)} tok/s, llama.cpp ${l.tokensPerSec.toFixed(1)} tok/s (${l.decodeCalls ?? '?'} llama_decode in ${l.forwardPasses} steps)`);
          }
        }
        for (const [batch, got] of runs) points.push(peerPoint(shape, dtype, batch, got.cohort, got.llama));
      } finally {
        runner.dispose();
        await llamaModel.dispose();
        rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await peer.llama.dispose();

  const date = new Date().toISOString().slice(0, 10);
  const note = [process.env.COHORT_BENCH_NOTE, ...skipped.map((s) => `skipped ${s}`)].filter(Boolean).join('; ');
  const report: PeerBenchReport = {
    schema: 1, date, machine, ...(note ? { note } : {}),
    cohort: { adapter, backend: process.env.COHORT_GPU === 'native' ? 'native' : 'swiftshader', runtime: `Node ${process.version}, npm webgpu ${webgpuVersion()} (Dawn)`, kvCacheType: 'f16' },
    llama: {
      binding: `node-llama-cpp ${bindingVersion()}`, llamaCpp: `${release.repo} ${release.release}`, requested: peer.requested, backend: peer.backend, devices: peer.devices,
      ...(peer.fallback ? { fallback: peer.fallback } : {}),
      threads: llamaThreads || peer.llama.cpuMathCores, flashAttention, kvCacheType: 'f16',
    },
    settings: { promptTokens: settings.promptTokens, decodeSteps: settings.decodeSteps, warmUpSteps: settings.warmUpSteps, repeats: settings.repeats, batches: settings.batches },
    models, points, runtimeSeconds: (Date.now() - startedAtMs) / 1000,
  };
  const outDir = resolve(process.env.COHORT_BENCH_RESULTS_DIR ?? repoPath('bench/results'));
  mkdirSync(outDir, { recursive: true });
  const base = join(outDir, `${date}-${machine}-peer`);
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(`${base}.md`, renderPeerMarkdown(report));
  console.log(renderPeerMarkdown(report));
  console.log(`wrote ${base}.{json,md}`);
}

main().then(
  () => process.exit(0), // Dawn's live instance and device would keep the process alive
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
