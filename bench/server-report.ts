// The Cohort vs llama-server report: per-run figures from what each engine recorded, the JSON shape
// and its markdown tables. Pure (no engines, servers or files); bench/server.node.ts does the measuring.
import { decodeThroughput, median, perSec, speedup, type MeasuredStep } from '../src/protocol/metrics';
import type { Workload } from './report';

/** Cohort: batched or serialized (EngineApi.setMode). llama-server: also 'queued', N requests at once to a --parallel 1 server. */
export type ServerBenchMode = 'batched' | 'serialized' | 'queued';
export type EngineName = 'cohort' | 'llama';

/** One /v1/chat/completions stream as the bench's fetch saw it (client clock), with llama.cpp's final timings. */
export interface StreamRecord {
  sentAtMs: number;
  endAtMs: number;
  /** llama.cpp's timings of the request: generated tokens, their generation time, prompt tokens fed and reused. */
  predictedN?: number;
  predictedMs?: number;
  promptN?: number;
  cacheN?: number;
}

/** The server's own counters over one run: /metrics read just before and just after it. */
export interface ServerCountersDelta {
  decodeCalls: number;
  tokensPredicted: number;
  /** Prompt tokens the server computed (not reused from a slot's cache). */
  promptTokens: number;
  promptTokensCached: number;
  /** Busy slots per llama_decode call over the run (n_busy_slots_per_decode is a mean since start; this is the run's own). */
  busyPerDecode: number;
  /** From the sampled StepEvents' event.server during the run. */
  maxBusy: number;
  maxDeferred: number;
  numSamples: number;
}

export interface EngineRun {
  repeat: number;
  /** All generated tokens of the run's turns. */
  newTokens: number;
  /** First send to last turn end, client clock. */
  wallMs: number;
  /** newTokens / wallMs: prefill, queueing and transport included. */
  endToEndTokensPerSec: number;
  /** Tokens from decode forwards (each turn's first token comes from its prefill and is left out). */
  decodeTokens: number;
  /** Time those tokens are counted over: Cohort, the summed elapsedMs of its decode-only steps; llama-server, the union of its requests' generation intervals. */
  decodeMs: number;
  decodeTokensPerSec: number;
  /** Cohort: mean rows per decode-only step; llama-server: decode tokens per llama_decode call. */
  meanBatch: number;
  /** Each turn's output, to say whether batched and serialized wrote the same (ids for Cohort, text for llama-server). */
  outputKey: string;
  server?: ServerCountersDelta;
}

export interface ModeFigures {
  medianDecodeTokensPerSec: number;
  medianEndToEndTokensPerSec: number;
  runs: EngineRun[];
}

export interface ServerBenchPoint {
  workload: Workload;
  sessions: number;
  cohort: Partial<Record<ServerBenchMode, ModeFigures>>;
  llama: Partial<Record<ServerBenchMode, ModeFigures>>;
  /** Batched over serialized, on decode tok/s and on end-to-end tok/s (speedup() of src/protocol/metrics.ts). */
  speedups: Record<EngineName, { decode: number; endToEnd: number }>;
  /** Batched and serialized wrote the same outputs in every repeat. */
  sameOutputs: Record<EngineName, boolean>;
}

export interface LoadReading {
  atMs: number;
  /** os.loadavg(): 1, 5 and 15 minute load averages. */
  loadavg: number[];
  label: string;
}

export interface ServerBenchReport {
  schema: 1;
  date: string;
  machine: string;
  quick: boolean;
  model: { name: string; numParams: number; gguf: string };
  cohort: { adapter: string; runtime: string };
  llama: { binary: string; build: string; threads: number; sampleEveryMs: number; slotContext: number };
  settings: { sessions: number[]; rounds: number; workloads: Record<Workload, { maxNewTokens: number; meanPromptTokens: number }> };
  cpus: number;
  load: LoadReading[];
  points: ServerBenchPoint[];
  runtimeSeconds: number;
  note?: string;
}

/** Total length of the union of [start, end] intervals. */
export function unionMs(intervals: ReadonlyArray<readonly [number, number]>): number {
  const sorted = intervals.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  if (sorted.length === 0) return 0;
  let total = 0;
  let [start, end] = sorted[0]!;
  for (const [a, b] of sorted.slice(1)) {
    if (a > end) {
      total += end - start;
      start = a;
      end = b;
    } else end = Math.max(end, b);
  }
  return total + (end - start);
}

/** A Cohort run's figures: decode tok/s over its decode-only steps (the house metric) and end to end. */
export function cohortRun(repeat: number, steps: readonly MeasuredStep[], outputs: ReadonlyArray<ArrayLike<number>>, wallMs: number): EngineRun {
  const d = decodeThroughput(steps);
  const newTokens = outputs.reduce((n, o) => n + o.length, 0);
  return {
    repeat,
    newTokens,
    wallMs,
    endToEndTokensPerSec: perSec(newTokens, wallMs),
    decodeTokens: d.decodeTokens,
    decodeMs: d.decodeMs,
    decodeTokensPerSec: d.tokensPerSec,
    meanBatch: d.meanRowsPerStep,
    outputKey: JSON.stringify(outputs.map((o) => Array.from(o))),
  };
}

/**
 * A llama-server run's figures from its streams: decode tokens (predicted_n - 1 per request) over the
 * union of the requests' generation intervals [end - predicted_ms, end], so overlapping slots count once.
 */
export function llamaRun(repeat: number, streams: readonly StreamRecord[], texts: readonly string[], server: ServerCountersDelta): EngineRun {
  const newTokens = streams.reduce((n, s) => n + (s.predictedN ?? 0), 0);
  const decodeTokens = streams.reduce((n, s) => n + Math.max(0, (s.predictedN ?? 0) - 1), 0);
  const decodeMs = unionMs(streams.map((s) => [s.endAtMs - (s.predictedMs ?? 0), s.endAtMs] as const));
  const wallMs = streams.length > 0 ? Math.max(...streams.map((s) => s.endAtMs)) - Math.min(...streams.map((s) => s.sentAtMs)) : 0;
  return {
    repeat,
    newTokens,
    wallMs,
    endToEndTokensPerSec: perSec(newTokens, wallMs),
    decodeTokens,
    decodeMs,
    decodeTokensPerSec: perSec(decodeTokens, decodeMs),
    meanBatch: server.decodeCalls > 0 ? server.tokensPredicted / server.decodeCalls : 0,
    outputKey: JSON.stringify(texts),
    server,
  };
}

export function modeFigures(runs: EngineRun[]): ModeFigures {
  return {
    medianDecodeTokensPerSec: median(runs.map((r) => r.decodeTokensPerSec)),
    medianEndToEndTokensPerSec: median(runs.map((r) => r.endToEndTokensPerSec)),
    runs,
  };
}

/** Batched over serialized for one engine's cell; NaN where either side is missing. */
export function pointSpeedups(cell: Partial<Record<ServerBenchMode, ModeFigures>>): { decode: number; endToEnd: number } {
  const b = cell.batched;
  const s = cell.serialized;
  if (!b || !s) return { decode: Number.NaN, endToEnd: Number.NaN };
  return {
    decode: speedup({ tokensPerSec: b.medianDecodeTokensPerSec }, { tokensPerSec: s.medianDecodeTokensPerSec }) ?? Number.NaN,
    endToEnd: speedup({ tokensPerSec: b.medianEndToEndTokensPerSec }, { tokensPerSec: s.medianEndToEndTokensPerSec }) ?? Number.NaN,
  };
}

export function sameOutputs(cell: Partial<Record<ServerBenchMode, ModeFigures>>): boolean {
  const b = cell.batched?.runs ?? [];
  const s = cell.serialized?.runs ?? [];
  return b.length > 0 && b.every((run, i) => s[i] !== undefined && s[i]!.outputKey === run.outputKey);
}

function fmt(value: number | undefined, digits = 1): string {
  return value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a';
}

const NAMES: Record<Workload, string> = { chat: 'chat', niah: 'NIAH' };

/** One table of tok/s (decode or end to end): both engines' batched, serialized and speed-up side by side. */
export function rateTable(report: ServerBenchReport, which: 'decode' | 'endToEnd'): string {
  const pick = (m?: ModeFigures): number | undefined => (which === 'decode' ? m?.medianDecodeTokensPerSec : m?.medianEndToEndTokensPerSec);
  const lines = [
    '| workload | sessions | Cohort batched | Cohort serialized | Cohort speed-up | llama-server batched | llama-server serialized | llama-server speed-up | llama-server --parallel 1, N at once |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const p of report.points) {
    lines.push(
      `| ${NAMES[p.workload]} | ${p.sessions} | ${fmt(pick(p.cohort.batched))} | ${fmt(pick(p.cohort.serialized))} | ${ratio(p.speedups.cohort[which])} | ` +
        `${fmt(pick(p.llama.batched))} | ${fmt(pick(p.llama.serialized))} | ${ratio(p.speedups.llama[which])} | ${p.llama.queued ? fmt(pick(p.llama.queued)) : 'same as serialized'} |`,
    );
  }
  return lines.join('\n');
}

/** llama-server's own counters in its batched runs (medians over rounds) and whether the modes agreed. */
export function serverTable(report: ServerBenchReport): string {
  const lines = [
    '| workload | sessions | busy slots per decode | decode tokens per llama_decode | most busy slots sampled | prompt tokens computed / reused | same text batched vs serialized (llama / Cohort ids) |',
    '| --- | ---: | ---: | ---: | ---: | ---: | :---: |',
  ];
  for (const p of report.points) {
    const runs = p.llama.batched?.runs ?? [];
    const m = (f: (r: EngineRun) => number): number => median(runs.map(f));
    lines.push(
      `| ${NAMES[p.workload]} | ${p.sessions} | ${fmt(m((r) => r.server!.busyPerDecode), 2)} | ${fmt(m((r) => r.meanBatch), 2)} | ${fmt(m((r) => r.server!.maxBusy), 0)} | ` +
        `${fmt(m((r) => r.server!.promptTokens), 0)} / ${fmt(m((r) => r.server!.promptTokensCached), 0)} | ${p.sameOutputs.llama ? 'yes' : 'no'} / ${p.sameOutputs.cohort ? 'yes' : 'no'} |`,
    );
  }
  return lines.join('\n');
}

export function loadLine(report: ServerBenchReport): string {
  const all = report.load.map((l) => l.loadavg[0]!);
  const readings = report.load.map((l) => `${l.label} ${l.loadavg.map((x) => x.toFixed(2)).join('/')}`).join('; ');
  return (
    `Machine load (1/5/15-minute load averages on ${report.cpus} cores): ${readings}. ` +
    `1-minute load ranged ${fmt(Math.min(...all), 2)}-${fmt(Math.max(...all), 2)}, so other work shared these cores during the run.`
  );
}

export const CAVEAT =
  'Both engines ran the same GGUF on the same machine in one sitting, in interleaved rounds. This is not a like-for-like kernel ' +
  "comparison: Cohort's WGSL kernels run on SwiftShader (a CPU emulation of a GPU, under Node's Dawn), llama-server on llama.cpp's " +
  "native CPU kernels. The point is each engine's batching gain (batched over serialized) on the same model and machine.";

const METHOD =
  'Decode tok/s: Cohort, decode rows over the summed elapsedMs of its decode-only steps (src/protocol/metrics.ts decodeThroughput); ' +
  "llama-server, tokens after each request's first over the union of the requests' generation intervals (llama.cpp's own predicted_ms per request, " +
  'ending when its stream ended). End-to-end tok/s: all generated tokens over first send to last turn end on the client clock, prefill and transport included. ' +
  'Serialized: one request at a time (Cohort setMode; llama-server ServerHost.setMode on the N-slot server). The last column sends all N at once to a --parallel 1 server, which queues them.';

export function renderServerMarkdown(report: ServerBenchReport): string {
  const w = report.settings.workloads;
  const settings = (Object.keys(w) as Workload[]).map((k) => `${NAMES[k]}: ~${Math.round(w[k].meanPromptTokens)} prompt tokens, ${w[k].maxNewTokens} new`).join('; ');
  return [
    `# Cohort vs llama-server ${report.date} on ${report.machine}${report.quick ? ' (quick grid)' : ''}`,
    '',
    ...(report.note ? [`Note: ${report.note}`, ''] : []),
    CAVEAT,
    '',
    loadLine(report),
    '',
    `${report.model.name} (${report.model.numParams.toLocaleString('en-US')} params, ${report.model.gguf}). Cohort: ${report.cohort.adapter}, ${report.cohort.runtime}. ` +
      `llama-server ${report.llama.build}, --threads ${report.llama.threads}, ${report.llama.slotContext} tokens of context per slot, one server per slot count, ` +
      `sampled by ServerHost every ${report.llama.sampleEveryMs} ms. ${settings}; greedy, every turn runs its full length (ignore_eos); ` +
      `median of ${report.settings.rounds} rounds after a warm-up.`,
    '',
    METHOD,
    '',
    '## Decode tok/s',
    '',
    rateTable(report, 'decode'),
    '',
    '## End-to-end tok/s',
    '',
    rateTable(report, 'endToEnd'),
    '',
    "## llama-server's own counters (batched runs)",
    '',
    serverTable(report),
    '',
    `Bench runtime: ${Math.round(report.runtimeSeconds / 60)} min.`,
    '',
  ].join('\n');
}
