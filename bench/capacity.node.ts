// `npm run bench:capacity [-- --budget-mib=1024] [--no-llama]`: sessions of 2k and 4k tokens that fit one KV budget
// per storage type, for the embedded model and three published shapes; writes results/<date>-capacity.{json,md}.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KV_CACHE_TYPES, kvBytesPerToken } from '../src/model/kv-types';
import { CARD_SESSION_TOKENS, sessionsThatFit } from '../src/app/model/kv-figures';
import { admitSessions, poolBlocks, PUBLISHED_KV_SHAPES, type KvModelShape } from './capacity';
import { admissionProblems, llamaCppKvBytesPerToken, llamaCppSessions, renderMarkdown, type CapacityReport, type CapacityRow } from './capacity-report';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string | undefined]));
const budgetBytes = Number(args.get('budget-mib') ?? 1024) * 2 ** 20;
if (!(budgetBytes > 0)) {
  console.error('Usage: npm run bench:capacity -- [--budget-mib=1024] [--no-llama] [--llama-cells=8192]');
  process.exit(2);
}
const BLOCK_SIZE = 16; // GpuRunner's default
// What device.ts asks for on this machine's adapter (SwiftShader: 1 GiB each); a discrete GPU's are larger
const limits = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30, minStorageBufferOffsetAlignment: 256 };
const llamaCells = Number(args.get('llama-cells') ?? 8192);

const root = fileURLToPath(new URL('..', import.meta.url));
const tinyConfig = JSON.parse(readFileSync(join(root, 'public/models/cohort-tiny/config.json'), 'utf8')) as Record<string, number>;
const shapes: KvModelShape[] = [
  {
    name: 'cohort-tiny',
    numLayers: tinyConfig.num_hidden_layers!,
    numKvHeads: tinyConfig.num_key_value_heads!,
    headDim: tinyConfig.head_dim!,
    maxPositions: tinyConfig.max_position_embeddings!,
    source: 'public/models/cohort-tiny/config.json',
  },
  ...PUBLISHED_KV_SHAPES,
];

let llamaMeasured: Map<string, Map<string, number>> | null = null;
let llamaCppNote = 'bytes per token by llama.cpp\'s formula only (--no-llama).';
if (!args.has('no-llama')) {
  const started = Date.now();
  try {
    const { LlamaKvProbe } = await import('./llama-kv');
    const probe = await LlamaKvProbe.start();
    llamaMeasured = new Map();
    try {
      for (const shape of shapes) llamaMeasured.set(shape.name, await probe.bytesPerToken(shape, KV_CACHE_TYPES, llamaCells));
    } finally {
      await probe.dispose();
    }
    llamaCppNote = `the formula's bytes per token confirmed by llama.cpp itself: node-llama-cpp's prebuilt CPU build loaded a synthetic GGUF of each shape (tools/models, random weights; its layers, KV heads and head size as listed, tiny FFN and vocabulary) and made a ${llamaCells}-cell context with K and V in each type (experimentalKvCacheKeyType / ValueType; flash attention for q8_0, which llama.cpp needs for a quantized V); "measured" is the K + V size in its log over its cells (${((Date.now() - started) / 1000).toFixed(0)} s).`;
  } catch (err) {
    llamaMeasured = null;
    llamaCppNote = `formula only: node-llama-cpp could not measure (${(err as Error).message}).`;
  }
}

const rows: CapacityRow[] = [];
for (const shape of shapes) {
  for (const type of KV_CACHE_TYPES) {
    const numBlocks = poolBlocks(shape, type, budgetBytes, limits, BLOCK_SIZE);
    const bytesPerToken = kvBytesPerToken(type, shape.numLayers, shape.numKvHeads * shape.headDim);
    const llamaBytes = llamaCppKvBytesPerToken(type, shape.numLayers, shape.numKvHeads, shape.headDim);
    const sessions = CARD_SESSION_TOKENS.map((tokens) => {
      const card = sessionsThatFit(numBlocks, BLOCK_SIZE, tokens);
      const requests = Math.ceil(card * 1.25) + 2; // more than fit, so the pool is what stops them
      const run = admitSessions(numBlocks, BLOCK_SIZE, tokens, requests);
      return { tokens, admitted: run.peakHeld, card, llamaCpp: llamaCppSessions(budgetBytes, llamaBytes, tokens), requests, completed: run.completed, preemptions: run.preemptions };
    });
    rows.push({ model: shape.name, type, bytesPerToken, llamaCppBytesPerToken: llamaBytes, llamaCppMeasuredBytesPerToken: llamaMeasured?.get(shape.name)?.get(type) ?? null, numBlocks, poolBytes: numBlocks * BLOCK_SIZE * bytesPerToken, sessions });
    console.log(`${shape.name} ${type}: ${bytesPerToken} B/token, ${numBlocks} blocks, sessions ${sessions.map((s) => `${s.tokens}: ${s.admitted}`).join(', ')}`);
  }
}

const date = new Date().toISOString().slice(0, 10);
const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', cwd: root }).stdout.trim();
const report: CapacityReport = {
  date,
  commit,
  budgetBytes,
  blockSize: BLOCK_SIZE,
  limits: { maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize, maxBufferSize: limits.maxBufferSize },
  shapes: shapes.map(({ name, numLayers, numKvHeads, headDim, source }) => ({ name, numLayers, numKvHeads, headDim, source })),
  rows,
  llamaCppNote,
  llamaCppCells: llamaMeasured ? llamaCells : null,
  ...(process.env.COHORT_BENCH_NOTE ? { note: process.env.COHORT_BENCH_NOTE } : {}),
};
const outDir = join(root, 'bench/results');
mkdirSync(outDir, { recursive: true });
const base = join(outDir, `${date}-capacity`);
writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
writeFileSync(`${base}.md`, renderMarkdown(report));
console.log(renderMarkdown(report));
const problems = admissionProblems(rows, report.llamaCppCells);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
