// `npm run bench:server`: the chat and NIAH grid on Cohort (EngineHost + GpuRunner in Node, SwiftShader)
// and on llama-server (ServerHost, one server per slot count) in interleaved rounds of one sitting. Asserts nothing.
import { mkdirSync, openAsBlob, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { GpuRunner } from '../src/gpu/gpu-runner';
import { loadShader, repoPath } from '../src/gpu/testing/node-gpu';
import { EngineHost } from '../src/host/engine-host';
import type { EngineApi, SessionOptions } from '../src/protocol/api';
import type { ServerSample } from '../src/protocol/server';
import { parsePrometheus, metricSum } from '../src/remote/prometheus';
import { ServerHost } from '../src/remote/server-host';
import { EMBEDDED_GGUF, llamaServerBinary, startLlamaServer, type RunningLlamaServer } from '../src/remote/testing/llama-server-fixtures';
import { runTurns, StepLog, type TurnSpec } from '../testing/harness/driver';
import { nodeBenchDevice } from './node-device';
import { GRID_USAGE, parseOptions } from './options';
import type { Workload } from './report';
import {
  cohortRun, llamaRun, modeFigures, pointSpeedups, renderServerMarkdown, sameOutputs,
  type EngineRun, type LoadReading, type ServerBenchMode, type ServerBenchPoint, type ServerBenchReport, type ServerCountersDelta, type StreamRecord,
} from './server-report';
import { benchSettings, chatPrompts, niahPrompts } from './settings';

const usage = `Usage: npm run bench:server -- [grid options] [--llama-threads=1] [--sample-ms=100] [--out=DIR]
${GRID_USAGE}
  (here: --sessions defaults to 1,8,16 and --quick to 1,4 sessions, 32 chat tokens and 1 round;
   --repeats is the number of interleaved rounds; the join is not run)
  --llama-threads=N    llama-server --threads (default 1: on a busy 2-core machine 2 threads stall llama.cpp's threadpool)
  --sample-ms=N        how often ServerHost samples /slots and /metrics (default 100)
  --max-minutes=N      start no round that would end past N minutes (a report is written after every round)
  --out=DIR            where the report goes (default: bench/results)
It writes <date>-<machine>-server-vs-cohort[-quick].{json,md}.`;

const SLOT_CONTEXT = 2048;

function greedy(maxNewTokens: number): SessionOptions {
  return { sampling: { temperature: 0 }, maxNewTokens, ignoreEos: true };
}

function turnsOf(workload: Workload, n: number, newTokens: number): TurnSpec[] {
  const prompts = workload === 'chat' ? chatPrompts(n) : niahPrompts(n).map((c) => c.prompt);
  return prompts.map((prompt) => ({ prompt, options: greedy(newTokens) }));
}

/** The embedded model's files as a person would drop them (its Hugging Face files, GGUF copies left out). */
async function embeddedModelFiles(): Promise<File[]> {
  const dir = repoPath('public/models/cohort-tiny');
  const paths = readdirSync(dir).map((name) => join(dir, name)).filter((p) => statSync(p).isFile() && !p.endsWith('.gguf'));
  return Promise.all(paths.map(async (p) => new File([await openAsBlob(p)], basename(p))));
}

/** fetch that notes when each completion stream was sent and ended, and llama.cpp's final timings in it. */
function tappedFetch(streams: StreamRecord[]): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.endsWith('/v1/chat/completions')) return fetch(input, init);
    const record: StreamRecord = { sentAtMs: performance.now(), endAtMs: Number.NaN };
    streams.push(record);
    const response = await fetch(input, init);
    if (!response.body) return response;
    const decoder = new TextDecoder();
    let tail = '';
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          tail = (tail + decoder.decode(chunk, { stream: true })).slice(-16_384);
          controller.enqueue(chunk);
        },
        flush() {
          record.endAtMs = performance.now();
          for (const line of tail.split('\n')) {
            if (!line.startsWith('data: {')) continue;
            try {
              const t = (JSON.parse(line.slice(6)) as { timings?: { predicted_n?: number; predicted_ms?: number; prompt_n?: number; cache_n?: number } }).timings;
              if (t?.predicted_n !== undefined) Object.assign(record, { predictedN: t.predicted_n, predictedMs: t.predicted_ms, promptN: t.prompt_n, cacheN: t.cache_n });
            } catch {
              // the tail's first line may be cut
            }
          }
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

interface Counters {
  decodeCalls: number;
  busyTotal: number;
  tokensPredicted: number;
  promptTokens: number;
  promptTokensCached: number;
}

async function scrape(baseUrl: string): Promise<Counters> {
  const m = parsePrometheus(await (await fetch(`${baseUrl}/metrics`)).text());
  const get = (name: string): number => metricSum(m, `llamacpp:${name}`) ?? 0;
  return {
    decodeCalls: get('n_decode_total'),
    busyTotal: get('n_busy_slots_per_decode') * get('n_decode_total'),
    tokensPredicted: get('tokens_predicted_total'),
    promptTokens: get('prompt_tokens_total'),
    promptTokensCached: get('prompt_tokens_cached_total'),
  };
}

interface Llama {
  numSlots: number;
  server: RunningLlamaServer;
  api: EngineApi;
  log: StepLog;
  samples: ServerSample[];
  streams: StreamRecord[];
}

async function startLlama(numSlots: number, threads: number, sampleEveryMs: number): Promise<Llama> {
  const server = await startLlamaServer({ numSlots, slotContext: SLOT_CONTEXT, threads });
  const streams: StreamRecord[] = [];
  const samples: ServerSample[] = [];
  const host = new ServerHost({ sampleEveryMs, fetchFn: tappedFetch(streams) });
  const log = new StepLog();
  await host.subscribe((event) => {
    log.push(event);
    if (event.server) samples.push(event.server);
  });
  await host.loadModel({ kind: 'server', baseUrl: `${server.baseUrl}/v1/` });
  return { numSlots, server, api: host as unknown as EngineApi, log, samples, streams };
}

async function runLlama(llama: Llama, mode: 'batched' | 'serialized', turns: TurnSpec[], repeat: number): Promise<EngineRun> {
  const before = await scrape(llama.server.baseUrl);
  const firstStream = llama.streams.length;
  const firstSample = llama.samples.length;
  const record = await runTurns(llama.api, llama.log, { mode, turns });
  const after = await scrape(llama.server.baseUrl);
  const samples = llama.samples.slice(firstSample);
  const decodeCalls = after.decodeCalls - before.decodeCalls;
  const server: ServerCountersDelta = {
    decodeCalls,
    tokensPredicted: after.tokensPredicted - before.tokensPredicted,
    promptTokens: after.promptTokens - before.promptTokens,
    promptTokensCached: after.promptTokensCached - before.promptTokensCached,
    busyPerDecode: decodeCalls > 0 ? (after.busyTotal - before.busyTotal) / decodeCalls : 0,
    maxBusy: Math.max(0, ...samples.map((s) => s.numBusy ?? 0)),
    maxDeferred: Math.max(0, ...samples.map((s) => s.numDeferred ?? 0)),
    numSamples: samples.length,
  };
  const failed = record.turns.filter((t) => t.result.finishReason === 'error');
  if (failed.length > 0) throw new Error(`llama-server turn failed: ${failed[0]!.result.error}`);
  return llamaRun(repeat, llama.streams.slice(firstStream), record.turns.map((t) => t.result.text), server);
}

function reading(label: string, startedAtMs: number): LoadReading {
  return { atMs: Date.now() - startedAtMs, loadavg: loadavg(), label };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) return void console.log(usage);
  const { env, other } = parseOptions(args);
  for (const name of other.keys()) if (!['out', 'llama-threads', 'sample-ms', 'max-minutes'].includes(name)) throw new Error(`unknown option --${name}\n${usage}`);
  const quick = env.COHORT_BENCH_QUICK === '1';
  env.COHORT_BENCH_SESSIONS ??= quick ? '1,4' : '1,8,16';
  if (quick) env.COHORT_BENCH_REPEATS ??= '1';
  const settings = benchSettings({ ...process.env, ...env });
  const rounds = settings.repeats;
  const threads = Number(other.get('llama-threads') || 1);
  const sampleEveryMs = Number(other.get('sample-ms') || 100);
  const maxMinutes = Number(other.get('max-minutes') || Infinity);
  const outDir = resolve(other.get('out') || process.env.COHORT_BENCH_RESULTS_DIR || repoPath('bench/results'));
  const startedAtMs = Date.now();
  const load: LoadReading[] = [reading('start', startedAtMs)];
  const binary = await llamaServerBinary();
  if (!binary) throw new Error('llama-server is not built: run `node scripts/llama-server.mjs`');

  const { device, adapter, machine } = await nodeBenchDevice(env.COHORT_BENCH_MACHINE || process.env.COHORT_BENCH_MACHINE);
  const host = new EngineHost({ makeRunner: (model) => GpuRunner.create({ device, model, shaderSource: loadShader }), embeddedModelUrl: 'file:///unused/' });
  const cohort = host as unknown as EngineApi;
  const cohortLog = new StepLog();
  await cohort.subscribe((event) => cohortLog.push(event));
  const model = await cohort.loadModel({ kind: 'files', files: await embeddedModelFiles() });

  const slotCounts = [...new Set([1, ...settings.sessions])].sort((a, b) => a - b);
  const llamas = new Map<number, Llama>();
  const stopAll = async (): Promise<void> => void (await Promise.all([...llamas.values()].map((l) => l.server.stop())));
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  process.once('SIGTERM', () => void stopAll().then(() => process.exit(143)));
  try {
    for (const n of slotCounts) llamas.set(n, await startLlama(n, threads, sampleEveryMs));
    const build = (await (await fetch(`${llamas.get(1)!.server.baseUrl}/props`)).json().catch(() => ({}))) as { build_info?: string };
    console.log(`Cohort on ${adapter}; llama-server (${build.build_info ?? 'unknown build'}) with --parallel ${slotCounts.join(', ')}, --threads ${threads}; settings ${JSON.stringify({ ...settings, rounds })}`);

    const maxSessions = Math.max(...settings.sessions);
    const workloads = {} as ServerBenchReport['settings']['workloads'];
    for (const workload of settings.workloads) {
      // Warm-up: Cohort compiles its pipelines and fills its prefix cache with every session count's prompts (NIAH
      // suites differ by count: needle depths spread over n); each server fills its slots' prompt caches.
      const warm = await runTurns(cohort, cohortLog, { mode: 'batched', turns: turnsOf(workload, maxSessions, 4) });
      for (const n of settings.sessions) if (n < maxSessions) await runTurns(cohort, cohortLog, { mode: 'batched', turns: turnsOf(workload, n, 4) });
      await runTurns(cohort, cohortLog, { mode: 'serialized', turns: turnsOf(workload, 1, 4) });
      for (const llama of llamas.values()) await runTurns(llama.api, llama.log, { mode: 'batched', turns: turnsOf(workload, llama.numSlots, 4) });
      workloads[workload] = {
        maxNewTokens: workload === 'chat' ? settings.chatNewTokens : settings.niahNewTokens,
        meanPromptTokens: warm.turns.reduce((n, t) => n + t.result.promptTokenIds.length, 0) / warm.turns.length,
      };
    }
    load.push(reading('after warm-up', startedAtMs));

    type Cell = { cohort: Partial<Record<ServerBenchMode, EngineRun[]>>; llama: Partial<Record<ServerBenchMode, EngineRun[]>> };
    const cells = new Map<string, Cell>();
    const add = (cell: Cell, engine: 'cohort' | 'llama', mode: ServerBenchMode, run: EngineRun, label: string): void => {
      (cell[engine][mode] ??= []).push(run);
      const extra = run.server ? `, ${run.server.busyPerDecode.toFixed(2)} busy slots/decode, ${run.server.decodeCalls} decode calls` : '';
      console.log(`${label} ${engine} ${mode} #${run.repeat + 1}: decode ${run.decodeTokensPerSec.toFixed(1)} tok/s, end to end ${run.endToEndTokensPerSec.toFixed(1)} tok/s (${run.newTokens} tokens, ${(run.wallMs / 1000).toFixed(2)} s${extra})`);
    };
    const writeOut = (roundsDone: number): void => {
      const points: ServerBenchPoint[] = [...cells.entries()].map(([key, cell]) => {
        const [workload, sessions] = key.split(':') as [Workload, string];
        const fig = (c: Cell['cohort']): ServerBenchPoint['cohort'] => Object.fromEntries(Object.entries(c).map(([m, runs]) => [m, modeFigures(runs)]));
        const c = fig(cell.cohort);
        const l = fig(cell.llama);
        return { workload, sessions: Number(sessions), cohort: c, llama: l, speedups: { cohort: pointSpeedups(c), llama: pointSpeedups(l) }, sameOutputs: { cohort: sameOutputs(c), llama: sameOutputs(l) } };
      });
      const report: ServerBenchReport = {
        schema: 1,
        date: new Date(startedAtMs).toISOString().slice(0, 10),
        machine,
        quick,
        model: { name: 'cohort-tiny (embedded)', numParams: model.numParams, gguf: basename(EMBEDDED_GGUF) },
        cohort: { adapter, runtime: `Node ${process.version}, npm webgpu (Dawn)` },
        llama: { binary, build: build.build_info ?? 'unknown', threads, sampleEveryMs, slotContext: SLOT_CONTEXT },
        settings: { sessions: settings.sessions, rounds: roundsDone, workloads },
        cpus: cpus().length,
        load,
        points,
        runtimeSeconds: (Date.now() - startedAtMs) / 1000,
        ...(process.env.COHORT_BENCH_NOTE ? { note: process.env.COHORT_BENCH_NOTE } : {}),
      };
      const base = `${report.date}-${machine}-server-vs-cohort${quick ? '-quick' : ''}`;
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, `${base}.json`), JSON.stringify(report, null, 2) + '\n');
      const markdown = renderServerMarkdown(report);
      writeFileSync(join(outDir, `${base}.md`), markdown);
      console.log(`\n${markdown}\nwrote ${join(outDir, base)}.{json,md} after ${Math.round(report.runtimeSeconds)} s (${roundsDone} of ${rounds} rounds)`);
    };
    for (let round = 0; round < rounds; round++) {
      const roundStartedAtMs = Date.now();
      // Interleaved: each point on both engines in turn, the first engine and the first mode alternating by round.
      for (const workload of settings.workloads) {
        const newTokens = workloads[workload].maxNewTokens;
        for (const sessions of settings.sessions) {
          const key = `${workload}:${sessions}`;
          const cell = cells.get(key) ?? { cohort: {}, llama: {} };
          cells.set(key, cell);
          const turns = turnsOf(workload, sessions, newTokens);
          const label = `[${round + 1}/${rounds}] ${workload} x${sessions}`;
          const engines = round % 2 === 0 ? (['cohort', 'llama'] as const) : (['llama', 'cohort'] as const);
          for (const engine of engines) {
            if (engine === 'cohort') {
              for (const mode of round % 2 === 0 ? (['batched', 'serialized'] as const) : (['serialized', 'batched'] as const)) {
                const record = await runTurns(cohort, cohortLog, { mode, turns });
                add(cell, 'cohort', mode, cohortRun(round, record.steps, record.turns.map((t) => t.result.outputTokenIds), record.wallMs), label);
              }
            } else {
              const own = llamas.get(sessions)!;
              const modes: ServerBenchMode[] = sessions > 1 ? ['batched', 'serialized', 'queued'] : ['batched', 'serialized'];
              for (let i = 0; i < modes.length; i++) {
                const mode = modes[(i + round) % modes.length]!;
                const run = mode === 'queued' ? await runLlama(llamas.get(1)!, 'batched', turns, round) : await runLlama(own, mode, turns, round);
                add(cell, 'llama', mode, run, label);
              }
            }
          }
        }
      }
      load.push(reading(`after round ${round + 1}`, startedAtMs));
      // The report after every round, so a run stopped early still leaves one.
      writeOut(round + 1);
      const roundMs = Date.now() - roundStartedAtMs;
      if (round + 1 < rounds && Date.now() - startedAtMs + roundMs > maxMinutes * 60_000) {
        console.log(`stopping after ${round + 1} rounds: another would pass --max-minutes=${maxMinutes}`);
        break;
      }
    }
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0), // Dawn's live instance and device would keep the process alive
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
