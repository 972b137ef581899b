// The sliding-window capacity benchmark (npm run bench:window-capacity): for the Gemma-3-1B shape,
// sessions of 2k and 4k tokens a 2 GiB KV budget holds with every position kept versus the window
// honoured, in f16 and q8_0; each planned pool allocated for real on the Node WebGPU device (in a
// child process: SwiftShader keeps freed memory until exit). Writes bench/results/<date>-window-capacity.{json,md}.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KvArena, type KvArenaLimits, type KvArenaPlan, type KvShape } from '../src/gpu/kv-arena';
import { repoPath } from '../src/gpu/testing/node-gpu';
import { MODEL_SHAPES } from '../tools/models/published-shapes';
import { nodeBenchDevice } from './node-device';
import { CHUNK_TOKENS, windowCapacity, type WindowCapacityPoint } from './window-capacity';

const MODEL = 'Gemma-3-1B';
const BUDGET_BYTES = Number(process.env.COHORT_BENCH_KV_BYTES ?? 2 * 2 ** 30);
const BLOCK_SIZE = 16;
const SESSION_TOKENS = [2048, 4096];
/** Each KV buffer at most this, as the KV capacity bench: SwiftShader refuses buffers near its reported maxBufferSize. */
const MAX_KV_BUFFER_BYTES = 512 * 2 ** 20;

type Arenas = Array<{ shape: KvShape; plan: KvArenaPlan }>;

/** Allocates `arenas` in a child process; returns their buffers' bytes, or null when the device refused. */
function allocate(arenas: Arenas): number | null {
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), `--arenas=${JSON.stringify(arenas)}`], { encoding: 'utf8', env: process.env });
  const answer = child.stdout.split('\n').find((l) => l.startsWith('arenas '));
  if (!answer) throw new Error(`the arena child failed (status ${child.status}): ${child.stderr.slice(-2000)}`);
  return (JSON.parse(answer.slice(7)) as { bytes: number | null }).bytes;
}

async function allocateHere(arenas: Arenas): Promise<void> {
  const { device } = await nodeBenchDevice();
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  const made = arenas.map(({ shape, plan }) => new KvArena(device, shape, plan));
  const bytes = made.reduce((n, a) => n + a.buffers.reduce((m, b) => m + b.size, 0), 0);
  const refused = (await device.popErrorScope()) ?? (await device.popErrorScope());
  for (const a of made) a.destroy();
  console.log(`arenas ${JSON.stringify({ bytes: refused ? null : bytes })}`);
  process.exit(0);
}

function markdown(date: string, adapter: string, rows: Array<WindowCapacityPoint & { keptBytes: number | null; windowBytes: number | null }>): string {
  const mib = (b: number | null) => (b === null ? 'refused' : `${(b / 2 ** 20).toFixed(0)} MiB`);
  const lines = [
    `# Sliding-window KV capacity, ${MODEL} shape (${date})`,
    '',
    `${(BUDGET_BYTES / 2 ** 30).toFixed(0)} GiB of KV on ${adapter}, blocks of ${BLOCK_SIZE}. Kept: one arena of all 26 layers. Window honoured: the 4 global layers' arena plus the 22 local layers' window pool (slidingGroupBlocks for the row cap and ${CHUNK_TOKENS}-token prefill chunks), the row cap the largest whose pools hold that many sessions. Sessions filled through the engine's KV manager in ${CHUNK_TOKENS}-token chunks; every pool allocated on the device.`,
    '',
    '| KV type | session tokens | kept: blocks | kept: sessions | window: row cap | window: global blocks | window: local blocks | window: sessions | ratio | allocated (kept / window) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.kvCacheType} | ${r.sessionTokens} | ${r.keptBlocks} | ${r.keptSessions} | ${r.maxRows} | ${r.fullBlocks} | ${r.windowBlocks} | ${r.windowSessions} | ${(r.windowSessions / r.keptSessions).toFixed(2)}x | ${mib(r.keptBytes)} / ${mib(r.windowBytes)} |`),
    '',
    'Rerun: `npm run bench:window-capacity`.',
    '',
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { device, adapter } = await nodeBenchDevice(process.env.COHORT_BENCH_MACHINE);
  const limits: KvArenaLimits = { maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize, maxBufferSize: Math.min(device.limits.maxBufferSize, MAX_KV_BUFFER_BYTES), minStorageBufferOffsetAlignment: device.limits.minStorageBufferOffsetAlignment };
  const config = MODEL_SHAPES[MODEL]!;
  const numLocal = config.layerWindows.filter((w) => w > 0).length;
  const rows = [];
  for (const type of ['f16', 'q8_0'] as const) {
    for (const tokens of SESSION_TOKENS) {
      const p = windowCapacity(config, type, BLOCK_SIZE, tokens, limits, BUDGET_BYTES);
      const shape: KvShape = { numLayers: config.numLayers, blockSize: BLOCK_SIZE, kvDim: config.numKvHeads * config.headDim, kvCacheType: type };
      const keptBytes = allocate([{ shape, plan: p.plans.kept }]);
      const windowBytes = allocate([{ shape: { ...shape, numLayers: config.numLayers - numLocal }, plan: p.plans.full }, { shape: { ...shape, numLayers: numLocal }, plan: p.plans.window }]);
      console.log(`${type} @${tokens}: kept ${p.keptSessions} sessions, window ${p.windowSessions} (row cap ${p.maxRows}), ${(p.windowSessions / p.keptSessions).toFixed(2)}x`);
      rows.push({ ...p, keptBytes, windowBytes });
    }
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = process.env.COHORT_BENCH_OUT ?? repoPath('bench/results');
  mkdirSync(out, { recursive: true });
  const base = join(out, `${date}-window-capacity`);
  writeFileSync(`${base}.json`, `${JSON.stringify({ date, model: MODEL, adapter, budgetBytes: BUDGET_BYTES, blockSize: BLOCK_SIZE, rows: rows.map(({ plans: _, ...r }) => r) }, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown(date, adapter, rows));
  console.log(markdown(date, adapter, rows));
  process.exit(rows.every((r) => r.keptBytes !== null && r.windowBytes !== null && r.windowSessions > r.keptSessions) ? 0 : 1);
}

const arenasArg = process.argv.find((a) => a.startsWith('--arenas='));
if (arenasArg) await allocateHere(JSON.parse(arenasArg.slice('--arenas='.length)) as Arenas);
else await main();
