// The same-GPU peer benchmark's report: per (shape, dtype, batch) each engine's decode tok/s per run, their medians
// and the Cohort / llama.cpp ratio, and the markdown table. Pure; the measuring is peer.node.ts and peer-llama.ts.
import { decodeThroughput, median, type MeasuredStep } from '../src/protocol/metrics';

/** One timed run of one engine at one batch: its decode steps as the metrics module reads them. */
export interface EngineRun {
  tokensPerSec: number;
  decodeTokens: number;
  forwardPasses: number;
  decodeMs: number;
  /** llama.cpp only: llama_decode calls the run's steps made (one per step when its sequences batch together). */
  decodeCalls?: number;
}

/** A run's figures from its steps (decode-only steps counted, as everywhere: src/protocol/metrics.ts). */
export function engineRun(steps: readonly MeasuredStep[], decodeCalls?: number): EngineRun {
  const t = decodeThroughput(steps);
  return { tokensPerSec: t.tokensPerSec, decodeTokens: t.decodeTokens, forwardPasses: t.forwardPasses, decodeMs: t.decodeMs, ...(decodeCalls !== undefined ? { decodeCalls } : {}) };
}

/** One engine at one point: every interleaved run and their median. */
export interface EngineFigures {
  runs: EngineRun[];
  /** Median of the runs' decode tok/s (aggregate over the batch's sequences). */
  tokensPerSec: number;
  /** Median step time, ms (decodeMs / forwardPasses per run). */
  stepMs: number;
  /** llama.cpp only: llama_decode calls per step over all runs (1 means every step was one batch). */
  decodeCallsPerStep?: number;
}

export function engineFigures(runs: EngineRun[]): EngineFigures {
  const calls = runs.every((r) => r.decodeCalls !== undefined) && runs.length > 0 ? runs.reduce((n, r) => n + r.decodeCalls!, 0) : undefined;
  const steps = runs.reduce((n, r) => n + r.forwardPasses, 0);
  const mid = (values: number[]): number => (values.length > 0 ? median(values) : 0); // none: 0, never NaN in the JSON
  return {
    runs,
    tokensPerSec: mid(runs.map((r) => r.tokensPerSec)),
    stepMs: mid(runs.map((r) => (r.forwardPasses > 0 ? r.decodeMs / r.forwardPasses : 0))),
    ...(calls !== undefined && steps > 0 ? { decodeCallsPerStep: calls / steps } : {}),
  };
}

export interface PeerPoint {
  shape: string;
  dtype: string;
  batch: number;
  cohort: EngineFigures;
  llama: EngineFigures;
  /** Cohort / llama.cpp median decode tok/s; null when llama.cpp measured nothing. */
  ratio: number | null;
}

export function peerPoint(shape: string, dtype: string, batch: number, cohort: EngineRun[], llama: EngineRun[]): PeerPoint {
  const c = engineFigures(cohort);
  const l = engineFigures(llama);
  return { shape, dtype, batch, cohort: c, llama: l, ratio: l.tokensPerSec > 0 ? c.tokensPerSec / l.tokensPerSec : null };
}

export interface PeerModel {
  shape: string;
  dtype: string;
  ggufBytes: number;
  /** Stored types of its matrices, when more than one (q4_K's fallback rows). */
  matrixTypes: string[];
}

export interface PeerBenchReport {
  schema: 1;
  date: string;
  machine: string;
  note?: string;
  cohort: { adapter: string; backend: 'native' | 'swiftshader'; runtime: string; kvCacheType: string };
  llama: {
    /** node-llama-cpp version and the llama.cpp release its prebuilt binaries are built from. */
    binding: string;
    llamaCpp: string;
    requested: 'vulkan' | 'cpu';
    /** The build that ran: its Vulkan build on a device, or its CPU build. */
    backend: 'vulkan' | 'cpu';
    /** Device names node-llama-cpp reports for the build that ran (none on the CPU build). */
    devices: string[];
    /** Why the Vulkan build did not run, when it did not. */
    fallback?: string;
    threads: number;
    flashAttention: string;
    kvCacheType: string;
  };
  settings: { promptTokens: number; decodeSteps: number; warmUpSteps: number; repeats: number; batches: number[] };
  models: PeerModel[];
  points: PeerPoint[];
  runtimeSeconds: number;
}

const f1 = (x: number): string => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
/** Two decimals, or two significant digits below 0.1 (a CPU adapter against native CPU kernels). */
const ratioText = (x: number): string => `${x >= 0.1 ? x.toFixed(2) : x.toPrecision(2)}x`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function renderPeerMarkdown(r: PeerBenchReport): string {
  const l = r.llama;
  const backend = l.backend === 'vulkan' ? `Vulkan build on ${l.devices.join(', ') || 'an unnamed device'}` : `CPU build, ${plural(l.threads, 'thread')}`;
  const lines = [
    `# Cohort vs llama.cpp, same machine (${r.date}, ${r.machine})`,
    '',
    `- Cohort: ${r.cohort.adapter} (${r.cohort.backend}), ${r.cohort.runtime}, KV ${r.cohort.kvCacheType}`,
    `- llama.cpp ${l.llamaCpp} through ${l.binding}: **${backend}** (asked for ${l.requested}${l.fallback ? `; ${l.fallback}` : ''}), flash attention ${l.flashAttention}, KV ${l.kvCacheType}`,
    `- random-weight GGUFs of published shapes, greedy, sampled tokens fed back; ${r.settings.promptTokens}-token prompts, then ${r.settings.warmUpSteps} warm-up and ${r.settings.decodeSteps} timed decode steps per run; ${plural(r.settings.repeats, 'interleaved run')} per point, medians`,
    '- decode tok/s = tokens the batch decoded / summed step time (src/protocol/metrics.ts); a step is one forward pass on either engine (llama_decode calls per step shown)',
    ...(r.note ? [`- ${r.note}`] : []),
    `- ${Math.round(r.runtimeSeconds)} s in all`,
    '',
    '| model | batch | Cohort tok/s | llama.cpp tok/s | Cohort / llama.cpp | Cohort step ms | llama.cpp step ms | llama_decode / step |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const p of r.points) {
    const ratio = p.ratio === null ? '–' : ratioText(p.ratio);
    const calls = p.llama.decodeCallsPerStep === undefined ? '–' : p.llama.decodeCallsPerStep.toFixed(2);
    lines.push(`| ${p.shape} ${p.dtype} | ${p.batch} | ${f1(p.cohort.tokensPerSec)} | ${f1(p.llama.tokensPerSec)} | ${ratio} | ${f1(p.cohort.stepMs)} | ${f1(p.llama.stepMs)} | ${calls} |`);
  }
  lines.push('', '| model | GGUF MiB | matrix types |', '| --- | ---: | --- |');
  for (const m of r.models) lines.push(`| ${m.shape} ${m.dtype} | ${(m.ggufBytes / 2 ** 20).toFixed(0)} | ${m.matrixTypes.join(', ')} |`);
  return lines.join('\n') + '\n';
}
