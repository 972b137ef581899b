// The benchmark grid, wherever the engine runs: batched vs serialized at each session count and
// workload, a long prompt joining running decodes, and the report files. No browser, no GPU code.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelInfo } from '../src/protocol/api';
import type { TurnSpec } from '../testing/harness/driver';
import { median, speedup } from '../src/protocol/metrics';
import { joinLatency, longestGapAfter, type JoinLatency } from './metrics';
import { renderMarkdown, type BenchReport, type FeaturePoint, type Mode, type RunSummary, type SpeculationPoint, type ThroughputPoint, type Workload } from './report';
import { runFeaturesGrid } from './features-grid';
import { runSpeculationGrid } from './speculation-grid';
import { joinPrompt, type BenchSettings } from './settings';
import { greedy, summarize, workloadPrompts, type RunWorkload } from './workload';


export const TIMING =
  'Decode tokens only: tok/s = decode rows / summed elapsedMs of the steps that carry only decode rows ' +
  '(each such step is one forward pass; prefill forwards, which sample each first token, count on neither path).';

function workloadTurns(settings: BenchSettings, workload: Workload, n: number, maxNewTokens?: number): TurnSpec[] {
  const { prompts, newTokens } = workloadPrompts(settings, workload, n, maxNewTokens);
  return prompts.map(({ prompt }) => ({ prompt, options: greedy(newTokens) }));
}

async function measurePoint(run: RunWorkload, settings: BenchSettings, workload: Workload, sessions: number): Promise<ThroughputPoint> {
  const runs: Record<Mode, RunSummary[]> = { batched: [], serialized: [] };
  let outputsMatch = true;
  for (let repeat = 0; repeat < settings.repeats; repeat++) {
    // Alternate which mode goes first so drift (thermal, background load) hits both alike.
    const modes: Mode[] = repeat % 2 === 0 ? ['batched', 'serialized'] : ['serialized', 'batched'];
    const outputs: Partial<Record<Mode, string>> = {};
    for (const mode of modes) {
      const record = await run({ mode, turns: workloadTurns(settings, workload, sessions) });
      const summary = summarize(record, repeat);
      runs[mode].push(summary);
      outputs[mode] = JSON.stringify(record.turns.map((t) => t.result.outputTokenIds));
      console.log(
        `${workload} x${sessions} ${mode} #${repeat + 1}: ${summary.tokensPerSec.toFixed(1)} tok/s ` +
          `(${summary.decodeTokens} tokens in ${summary.forwardPasses} passes, ${(summary.wallMs / 1000).toFixed(1)} s)`,
      );
    }
    outputsMatch &&= outputs.batched === outputs.serialized;
  }
  return throughputPoint(workload, sessions, runs, outputsMatch);
}

/** A grid cell from its repeats: each mode's median decode tok/s and their speed-up. */
export function throughputPoint(workload: Workload, sessions: number, runs: Record<Mode, RunSummary[]>, outputsMatch: boolean): ThroughputPoint {
  const batched = median(runs.batched.map((r) => r.tokensPerSec));
  const serialized = median(runs.serialized.map((r) => r.tokensPerSec));
  const ratio = speedup({ tokensPerSec: batched }, { tokensPerSec: serialized }) ?? Number.NaN;
  return {
    workload,
    sessions,
    batched: { medianTokensPerSec: batched, runs: runs.batched },
    serialized: { medianTokensPerSec: serialized, runs: runs.serialized },
    speedup: ratio,
    efficiency: ratio / sessions,
    outputsMatch,
  };
}

/** Steps the decoders take before the long prompt is sent. */
const JOIN_AFTER_STEPS = 4;

/** Chat sessions decode; once they are a few steps in, a long fresh prompt joins (batched); then the decoders alone, as the control. */
async function measureJoin(run: RunWorkload, settings: BenchSettings): Promise<BenchReport['join']> {
  if (settings.joinDecoders < 1) return null;
  const runs: JoinLatency[] = [];
  for (let repeat = 0; repeat < settings.repeats; repeat++) {
    const decoders = workloadTurns(settings, 'chat', settings.joinDecoders, Math.max(settings.chatNewTokens, 48));
    const joiner: TurnSpec = { prompt: joinPrompt(settings.joinPromptTokens, repeat), options: greedy(1), afterSteps: JOIN_AFTER_STEPS };
    const join = joinLatency(await run({ mode: 'batched', turns: [...decoders, joiner] }));
    join.maxGapWithoutJoinMs = longestGapAfter(await run({ mode: 'batched', turns: decoders }), JOIN_AFTER_STEPS);
    runs.push(join);
    console.log(`join #${repeat + 1}: ${JSON.stringify(join)}`);
  }
  const pick = (key: keyof JoinLatency): number => median(runs.map((r) => r[key] ?? Number.NaN));
  const keys = Object.keys(runs[0]!) as Array<keyof JoinLatency>;
  return { decoders: settings.joinDecoders, runs, median: Object.fromEntries(keys.map((k) => [k, pick(k)])) as unknown as JoinLatency };
}

export interface GridResult {
  workloads: BenchReport['settings']['workloads'];
  throughput: ThroughputPoint[];
  join: BenchReport['join'];
  speculation?: SpeculationPoint[];
  features?: FeaturePoint[];
}

/** The whole grid on one engine: every workload at every session count, then the join. */
export async function runGrid(run: RunWorkload, settings: BenchSettings): Promise<GridResult> {
  const maxSessions = Math.max(...settings.sessions);
  const throughput: ThroughputPoint[] = [];
  const workloads = {} as GridResult['workloads'];
  // 'only' runs just the parts marked 'only', without the batching grid
  const only = settings.speculation === 'only' || settings.features === 'only';
  const speculation = settings.speculation === 'off' || (only && settings.speculation !== 'only') ? undefined : () => runSpeculationGrid(run, settings);
  const features = settings.features === 'off' || (only && settings.features !== 'only') ? undefined : () => runFeaturesGrid(run, settings);
  if (only) {
    const points = speculation ? await speculation() : undefined;
    return { workloads, throughput, join: null, ...(points ? { speculation: points } : {}), ...(features ? { features: await features() } : {}) };
  }
  for (const workload of settings.workloads) {
    // Warm-up: compiles every pipeline and fills the prefix cache with this workload's prompts,
    // so every measured run starts alike (prefill is not measured; decode work is unchanged).
    const warm = await run({ mode: 'batched', turns: workloadTurns(settings, workload, maxSessions, 4) });
    await run({ mode: 'serialized', turns: workloadTurns(settings, workload, 1, 4) });
    workloads[workload] = {
      maxNewTokens: workload === 'chat' ? settings.chatNewTokens : settings.niahNewTokens,
      meanPromptTokens: warm.turns.reduce((n, t) => n + t.result.promptTokenIds.length, 0) / warm.turns.length,
      description: workload === 'chat' ? 'short chat turns' : 'needle-in-a-haystack prompts',
    };
    for (const sessions of settings.sessions) {
      // NIAH's prompt set differs with the session count (needle depths spread over n): warm this
      // count's own prompts too, or its first measured run would recompute every prompt cold
      if (sessions !== maxSessions) await run({ mode: 'batched', turns: workloadTurns(settings, workload, sessions, 4) });
      throughput.push(await measurePoint(run, settings, workload, sessions));
    }
  }
  const join = await measureJoin(run, settings);
  const speculationPoints = speculation ? await speculation() : undefined;
  return { workloads, throughput, join, ...(speculationPoints ? { speculation: speculationPoints } : {}), ...(features ? { features: await features() } : {}) };
}

export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'unknown';
}

export interface ReportContext {
  settings: BenchSettings;
  startedAtMs: number;
  gpu: BenchReport['gpu'];
  /** Where the engine ran, e.g. "Chromium 156.0" or "Node v20.20.2, npm webgpu 0.6.2 (Dawn)". */
  runtime: string;
  /** Machine name for the file names; defaults to COHORT_BENCH_MACHINE, else the adapter's. */
  machine: string;
  model: ModelInfo;
}

export function buildReport(context: ReportContext, grid: GridResult): BenchReport {
  const { settings } = context;
  return {
    schema: 1,
    date: new Date().toISOString().slice(0, 10),
    machine: context.machine,
    quick: settings.quick,
    gpu: context.gpu,
    runtime: context.runtime,
    model: context.model,
    settings: { sessions: settings.sessions, repeats: settings.repeats, workloads: grid.workloads, timing: TIMING },
    throughput: grid.throughput,
    join: grid.join,
    ...(grid.speculation ? { speculation: grid.speculation } : {}),
    ...(grid.features ? { features: grid.features } : {}),
    runtimeSeconds: (Date.now() - context.startedAtMs) / 1000,
    ...(process.env.COHORT_BENCH_NOTE ? { note: process.env.COHORT_BENCH_NOTE } : {}),
  };
}

/** `<date>-<machine>[-<suffix>][-speculation][-features][-quick]`: the report's files share this name (-speculation, -features: those parts alone). */
export function reportBaseName(report: BenchReport, suffix = ''): string {
  const only = report.throughput.length === 0 ? `${report.speculation ? '-speculation' : ''}${report.features ? '-features' : ''}` : '';
  return `${report.date}-${report.machine}${suffix ? `-${suffix}` : ''}${only}${report.quick ? '-quick' : ''}`;
}

/** Writes <base>.json and <base>.md (which links <base>.png, drawn by whoever can draw it). */
export function writeReport(report: BenchReport, dir: string, base: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${base}.json`), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, `${base}.md`), renderMarkdown(report, `${base}.png`));
}
