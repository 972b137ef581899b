// The benchmark report: its JSON shape and the markdown tables rendered from it (the results
// file and README's Benchmark section). Formatting only: no measuring, no files.
import type { ModelInfo } from '../src/protocol/api';
import type { DecodeThroughput } from '../src/protocol/metrics';
import type { JoinLatency } from './metrics';

export type Workload = 'chat' | 'niah';
export type Mode = 'batched' | 'serialized';

export interface RunSummary extends DecodeThroughput {
  repeat: number;
  medianTimeToFirstTokenMs: number;
  meanPromptTokens: number;
  meanNewTokens: number;
  wallMs: number;
}

export interface ModeResult {
  medianTokensPerSec: number;
  runs: RunSummary[];
}

export interface ThroughputPoint {
  workload: Workload;
  sessions: number;
  batched: ModeResult;
  serialized: ModeResult;
  /** Median batched tok/s over median serialized tok/s. */
  speedup: number;
  /** speedup / sessions: the share of the linear limit reached. */
  efficiency: number;
  /** Batched and serialized produced the same tokens in every repeat (greedy, batch invariance). */
  outputsMatch: boolean;
}

export interface SpeculationCase {
  name: string;
  workload: Workload;
  sessions: number;
  /** Each NIAH session predicts its own secret code (OpenAI's Predicted Outputs). */
  prediction: boolean;
  /** New tokens per turn (default: the workload's, from the bench settings). */
  newTokens?: number;
}

export interface SpeculationSide {
  medianTokensPerSec: number;
  runs: RunSummary[];
  /** Accepted over drafted tokens, all repeats (null: nothing was drafted). */
  acceptanceRate: number | null;
  /** Tokens a decode row made per step it rode in, all repeats. */
  tokensPerRowStep: number;
}

export interface SpeculationPoint extends SpeculationCase {
  off: SpeculationSide;
  on: SpeculationSide;
  /** Median on tok/s over median off tok/s. */
  ratio: number;
  /** Greedy output identical with and without speculation in every repeat. */
  outputsMatch: boolean;
}

/** A features case: two sides of the same sessions, side b measured against side a. */
export interface FeatureCase {
  name: string;
  sessions: number;
  /** The sides' labels, e.g. 'serialized' and 'batched', 'unconstrained' and 'constrained', 'plain' and the sampling features. */
  a: string;
  b: string;
}

export interface FeatureSide {
  medianTokensPerSec: number;
  runs: RunSummary[];
  /** Constrained sides: replies over all repeats, those that stopped (not cut by the token cap), and of those the ones that parse and validate. */
  replies?: { replies: number; stopped: number; valid: number };
  /** How its turns ended over all repeats, e.g. { length: 20, stop: 4 }. */
  finishReasons: Record<string, number>;
}

export interface FeaturePoint extends FeatureCase {
  /** Most new tokens per turn. */
  newTokens: number;
  sideA: FeatureSide;
  sideB: FeatureSide;
  /** Median over repeats of b's tok/s / a's tok/s (the sides ran back to back, alternating first). */
  ratio: number;
  ratios: number[];
  /**
   * Median over repeats of B's / A's median wall ms of a decode-only step carrying every session's
   * row (a side whose replies end early is compared while all its rows run); absent where a side has none (serialized).
   */
  stepRatio?: number;
  /** Serialized vs batched only: greedy output identical on both sides in every repeat. */
  outputsMatch?: boolean;
}

export interface BenchReport {
  schema: 1;
  date: string;
  machine: string;
  quick: boolean;
  gpu: { adapter: string; backend: 'swiftshader' | 'native' };
  /** Where the engine ran: "Chromium 156.0..." (npm run bench) or "Node v20..., npm webgpu ..." (bench:headless). */
  runtime: string;
  model: ModelInfo;
  settings: {
    sessions: number[];
    repeats: number;
    workloads: Record<Workload, { maxNewTokens: number; meanPromptTokens: number; description: string }>;
    timing: string;
  };
  throughput: ThroughputPoint[];
  join: { decoders: number; runs: JoinLatency[]; median: JoinLatency } | null;
  /** Speculation off vs on (absent: not run). */
  speculation?: SpeculationPoint[];
  /** Structured output and sampling features, side by side (absent: not run). */
  features?: FeaturePoint[];
  runtimeSeconds: number;
  /** Conditions worth knowing when reading the numbers (COHORT_BENCH_NOTE). */
  note?: string;
}

const WORKLOAD_NAMES: Record<Workload, string> = { chat: 'chat', niah: 'NIAH' };

function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** The throughput table: one row per workload and session count. */
export function throughputTable(report: BenchReport): string {
  const lines = [
    '| workload | sessions | batched tok/s | serialized tok/s | speedup | of linear | new tokens per session | same tokens |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | :---: |',
  ];
  for (const p of report.throughput) {
    // Turns run to their full length (ignoreEos); the mean says so, or shows where one stopped early.
    const newTokens = p.batched.runs[0]?.meanNewTokens ?? Number.NaN;
    lines.push(
      `| ${WORKLOAD_NAMES[p.workload]} | ${p.sessions} | ${fmt(p.batched.medianTokensPerSec)} | ${fmt(p.serialized.medianTokensPerSec)} | ` +
        `${fmt(p.speedup, 2)}x | ${fmt(100 * p.efficiency, 0)}% | ${fmt(newTokens)} | ${p.outputsMatch ? 'yes' : 'NO'} |`,
    );
  }
  return lines.join('\n');
}

export function joinTable(report: BenchReport): string {
  if (!report.join) return '';
  const m = report.join.median;
  return [
    `A ${m.joinPromptTokens}-token prompt joins ${report.join.decoders} decoding sessions (batched; medians of ${report.join.runs.length}):`,
    '',
    '| time to first token | join steps | largest chunk | longest join step | longest token gap while joining | median gap before | longest gap, no join (control) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${fmt(m.timeToFirstTokenMs, 0)} ms | ${fmt(m.joinSteps, 0)} | ${fmt(m.maxChunkTokens, 0)} tokens | ${fmt(m.longestJoinStepMs, 0)} ms | ` +
      `${fmt(m.maxGapDuringJoinMs, 0)} ms | ${fmt(m.medianGapBeforeJoinMs, 0)} ms | ${fmt(m.maxGapWithoutJoinMs ?? Number.NaN, 0)} ms |`,
    '',
    'The control runs the same decoders again without the joining prompt: its longest gap is what the machine alone does to them.',
  ].join('\n');
}

function settingsLine(report: BenchReport): string {
  const w = report.settings.workloads;
  const parts = (Object.keys(w) as Workload[]).map(
    (k) => `${WORKLOAD_NAMES[k]}: ${w[k].description}, ~${Math.round(w[k].meanPromptTokens)} prompt tokens, up to ${w[k].maxNewTokens} new tokens`,
  );
  return (
    `${report.model.name} (${report.model.numParams.toLocaleString('en-US')} params) on ${report.gpu.adapter} (${report.gpu.backend}), ${report.runtime}. ` +
    `${parts.length > 0 ? `${parts.join('; ')}. ` : ''}Greedy decoding; median of ${report.settings.repeats} repeats after a warm-up. ${report.settings.timing}`
  );
}

/** Settings, both tables and the chart: what the report file and the README section share. */
function reportBody(report: BenchReport, chartPath: string): string[] {
  const grid = report.throughput.length > 0 ? [throughputTable(report), '', joinTable(report), '', `![decode tokens/sec vs sessions](${chartPath})`] : [];
  return [settingsLine(report), '', ...grid, '', ...speculationMarkdown(report.speculation ?? []), ...featuresMarkdown(report.features ?? [])];
}

export function featuresMarkdown(points: readonly FeaturePoint[]): string[] {
  if (points.length === 0) return [];
  const replies = (s: FeatureSide) => (s.replies ? `${s.replies.valid}/${s.replies.stopped} of ${s.replies.replies}` : '-');
  return [
    '## Structured output and sampling features, side by side',
    '',
    `Decode tok/s over decode-only steps, medians of the repeats; B / A is the median of per-repeat ratios (sides alternating first). Constrained sessions each have one of 8 test JSON schemas, greedy, up to ${points[0]!.newTokens} new tokens (a reply ends where its grammar can); sampling: temperature 0.8, top-k 40, top-p 0.95 against the same with frequency 0.5, presence 0.3 and repetition 1.1 penalties, a logit bias and top-5 logprobs, full length. "step, all rows": the median decode step carrying all 8 rows (B / A > 1: B's step is slower). "valid": replies that parse and validate / replies that stopped, of all replies.`,
    '',
    '| case | A | A tok/s | B | B tok/s | B / A | B / A step, all rows | valid (B) | B ended | same output |',
    '| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- |',
    ...points.map(
      (p) =>
        `| ${p.name} | ${p.a} | ${p.sideA.medianTokensPerSec.toFixed(1)} | ${p.b} | ${p.sideB.medianTokensPerSec.toFixed(1)} | ${p.ratio.toFixed(2)}x | ${p.stepRatio === undefined ? '-' : `${p.stepRatio.toFixed(2)}x`} | ${replies(p.sideB)} | ${Object.entries(p.sideB.finishReasons ?? {}).map(([k, n]) => `${k} ${n}`).join(', ')} | ${p.outputsMatch === undefined ? '-' : p.outputsMatch ? 'yes' : 'NO'} |`,
    ),
    '',
  ];
}

export function speculationMarkdown(points: readonly SpeculationPoint[]): string[] {
  if (points.length === 0) return [];
  const rate = (r: number | null) => (r === null ? '-' : `${(100 * r).toFixed(0)}%`);
  return [
    '## Speculative decoding: off vs on (auto), batched',
    '',
    'Decode tok/s over decode-only steps (a verify row counts the tokens it made); medians of the repeats, sides alternating first.',
    '',
    '| case | off tok/s | on tok/s | on / off | acceptance | tokens per row-step (on) | same output |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...points.map(
      (p) =>
        `| ${p.name} | ${p.off.medianTokensPerSec.toFixed(1)} | ${p.on.medianTokensPerSec.toFixed(1)} | ${p.ratio.toFixed(2)}x | ${rate(p.on.acceptanceRate)} | ${p.on.tokensPerRowStep.toFixed(2)} | ${p.outputsMatch ? 'yes' : 'NO'} |`,
    ),
    '',
  ];
}


/** The whole markdown report written beside the JSON. */
export function renderMarkdown(report: BenchReport, chartFile: string): string {
  return [
    `# Benchmark ${report.date} on ${report.machine}${report.quick ? ' (quick grid)' : ''}`,
    '',
    ...(report.note ? [`Note: ${report.note}`, ''] : []),
    ...reportBody(report, chartFile),
    '',
    `Bench runtime: ${Math.round(report.runtimeSeconds / 60)} min.`,
    '',
  ].join('\n');
}

/** README's Benchmark section body (between its markers), linking the full report. */
export function readmeSection(report: BenchReport, reportPath: string, chartPath: string): string {
  return [
    `Aggregate decode throughput, batched vs serialized, measured side by side in one run on ${report.date} ` +
      `(${report.machine}; full report: [${reportPath}](${reportPath})). Rerun with \`npm run bench\`, then \`npm run bench:readme\`.`,
    '',
    ...reportBody(report, chartPath),
  ].join('\n');
}
