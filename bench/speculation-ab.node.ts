// `npm run bench:speculation-ab -- [--rounds=5] [--tokens=128]`: one chat session, speculation 'auto' vs
// off in interleaved rounds, greedy and at temperature 1, on the embedded model and on a random-weight one. No grid.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { EngineHost } from '../src/host/engine-host';
import { writeSyntheticModel } from '../src/model/testing/synthetic-model-fixtures';
import type { EngineApi, SessionOptions } from '../src/protocol/api';
import { decodeThroughput, median, speculationFigures } from '../src/protocol/metrics';
import { runTurns, StepLog } from '../testing/harness/driver';
import { modelFiles, nodeBenchDevice, webgpuVersion } from './node-device';
import { parseOptions } from './options';
import { chatPrompts } from './settings';

type Side = 'off' | 'auto';
interface Round { round: number; loadAvg1: number; tokensPerSec: Record<Side, number>; first: Side }
interface Case {
  model: string;
  temperature: number;
  rounds: Round[];
  acceptanceRate: number | null;
  tokensPerRowStep: number;
  /** Per turn, means over the rounds: decode steps on each side, drafts fed and accepted on auto's (counts, not times). */
  decodeStepsPerTurn: Record<Side, number>;
  draftedPerTurn: number;
  acceptedPerTurn: number;
  ratios: number[];
  medianRatio: number;
}

const { other } = parseOptions(process.argv.slice(2));
const rounds = Number(other.get('rounds') ?? 5);
const newTokens = Number(other.get('tokens') ?? 128);
const TEMPERATURES = [0, 1];

function options(side: Side, temperature: number, maxNewTokens: number): SessionOptions {
  // the same seed on both sides: at temperature 1 speculation keeps the distribution, not the tokens
  return { sampling: { temperature }, seed: 7, maxNewTokens, ignoreEos: true, speculation: side };
}

async function openModel(device: GPUDevice, path: string): Promise<{ api: EngineApi; log: StepLog }> {
  const host = new EngineHost({ makeRunner: (model) => GpuRunner.create({ device, model, shaderSource: loadShader }), embeddedModelUrl: 'file:///unused/' });
  const api = host as unknown as EngineApi;
  const log = new StepLog();
  await api.subscribe((event) => log.push(event));
  await api.loadModel({ kind: 'files', files: await modelFiles(path) });
  return { api, log };
}

async function measure(api: EngineApi, log: StepLog, model: string, temperature: number): Promise<Case> {
  const prompt = chatPrompts(1)[0]!;
  const run = (side: Side, tokens: number) => runTurns(api, log, { mode: 'batched', turns: [{ prompt, options: options(side, temperature, tokens) }] });
  for (const side of ['off', 'auto'] as const) await run(side, 8); // pipelines, prefix cache, auto's cost model
  const result: Round[] = [];
  const steps: Record<Side, Parameters<typeof speculationFigures>[0][number][]> = { off: [], auto: [] };
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ['off', 'auto'] : ['auto', 'off'];
    const tokensPerSec = { off: 0, auto: 0 };
    const loadAvg1 = loadavg()[0]!;
    for (const side of order) {
      const record = await run(side, newTokens);
      tokensPerSec[side] = decodeThroughput(record.steps).tokensPerSec;
      steps[side].push(...record.steps);
    }
    console.log(`${model} T=${temperature} round ${round + 1}: off ${tokensPerSec.off.toFixed(1)}, auto ${tokensPerSec.auto.toFixed(1)} tok/s (load ${loadAvg1.toFixed(2)})`);
    result.push({ round: round + 1, loadAvg1, tokensPerSec, first: order[0]! });
  }
  const ratios = result.map((r) => r.tokensPerSec.auto / r.tokensPerSec.off);
  const figures = speculationFigures(steps.auto);
  const decodeStepsPerTurn = { off: speculationFigures(steps.off).decodeRowSteps / rounds, auto: figures.decodeRowSteps / rounds };
  return { model, temperature, rounds: result, acceptanceRate: figures.acceptanceRate, tokensPerRowStep: figures.tokensPerRowStep, decodeStepsPerTurn, draftedPerTurn: figures.numDrafted / rounds, acceptedPerTurn: figures.numAccepted / rounds, ratios, medianRatio: median(ratios) };
}

function markdown(cases: Case[], meta: { date: string; commit: string; adapter: string; runtime: string; loadRange: [number, number] }): string {
  const pct = (x: number | null): string => (x === null ? 'nothing drafted' : `${(x * 100).toFixed(0)}%`);
  const lines = [
    `# Speculation 'auto' vs off, one chat session, ${newTokens} tokens (${meta.date}, ${meta.commit})`,
    '',
    `${meta.adapter}; ${meta.runtime}. ${rounds} interleaved rounds per case after a warm-up (sides alternate first), one engine per model, batched.`,
    `Decode tok/s over decode-only steps (src/protocol/metrics.ts). 1-minute load average over the run: ${meta.loadRange[0].toFixed(2)}-${meta.loadRange[1].toFixed(2)} on a shared 2-core machine.`,
    'Reproduce: `npm run bench:speculation-ab -- --rounds=' + rounds + ' --tokens=' + newTokens + '`.',
    '',
    '| model | temperature | off tok/s (median) | auto tok/s (median) | auto / off per round: median (range) | acceptance (auto) | drafted / accepted per turn (auto) | decode steps per turn, off / auto |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const c of cases) {
    const off = median(c.rounds.map((r) => r.tokensPerSec.off));
    const auto = median(c.rounds.map((r) => r.tokensPerSec.auto));
    lines.push(`| ${c.model} | ${c.temperature} | ${off.toFixed(1)} | ${auto.toFixed(1)} | ${c.medianRatio.toFixed(2)}x (${Math.min(...c.ratios).toFixed(2)}-${Math.max(...c.ratios).toFixed(2)}) | ${pct(c.acceptanceRate)} | ${c.draftedPerTurn.toFixed(1)} / ${c.acceptedPerTurn.toFixed(1)} | ${c.decodeStepsPerTurn.off.toFixed(1)} / ${c.decodeStepsPerTurn.auto.toFixed(1)} |`);
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const { device, adapter } = await nodeBenchDevice();
  const synthDir = mkdtempSync(join(tmpdir(), 'cohort-spec-ab-'));
  writeSyntheticModel({ arch: 'llama', seed: 3, format: 'hf', dtype: 'f32', dir: synthDir });
  const models = [
    { name: 'cohort-tiny (embedded)', path: repoPath('public/models/cohort-tiny') },
    { name: 'random-weight llama (synthetic, 259-token byte vocabulary)', path: synthDir },
  ];
  const cases: Case[] = [];
  const loads: number[] = [loadavg()[0]!];
  for (const m of models) {
    const { api, log } = await openModel(device, m.path);
    for (const temperature of TEMPERATURES) cases.push(await measure(api, log, m.name, temperature));
  }
  loads.push(...cases.flatMap((c) => c.rounds.map((r) => r.loadAvg1)), loadavg()[0]!);
  const date = new Date().toISOString().slice(0, 10);
  const commit = execSync('git rev-parse --short HEAD', { cwd: repoPath('.') }).toString().trim();
  const meta = { date, commit, adapter, runtime: `Node ${process.version}, npm webgpu ${webgpuVersion()}`, loadRange: [Math.min(...loads), Math.max(...loads)] as [number, number] };
  const outDir = repoPath('bench/results');
  mkdirSync(outDir, { recursive: true });
  const base = join(outDir, `${date}-speculation-ab`);
  writeFileSync(`${base}.json`, JSON.stringify({ ...meta, rounds, newTokens, cases }, null, 2) + '\n');
  writeFileSync(`${base}.md`, markdown(cases, meta));
  console.log(markdown(cases, meta));
}

main().then(
  () => process.exit(0), // Dawn's live device would keep the process alive
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
