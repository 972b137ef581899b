// New vs an earlier commit: per-kernel or grid benchmark reports of both, taken in alternating
// rounds of one sitting, paired into medians and new/old ratios, and the markdown tables. Arithmetic only.
import { median } from '../src/protocol/metrics';
import type { KernelBenchReport } from './kernel-report';
import type { BenchReport, Mode } from './report';

export interface BaselinePoint {
  model: string;
  batch: number;
  /** Medians over rounds of each side's median decode-step wall and GPU time. */
  baseStepMs: number;
  newStepMs: number;
  baseGpuMs: number;
  newGpuMs: number;
  /** base / new: above 1 means the new commit is faster. */
  stepSpeedup: number;
  gpuSpeedup: number;
  baseDispatches: number;
  newDispatches: number;
}

/** What both kinds of baseline report say about their sitting. */
export interface BaselineMeta {
  date: string;
  machine: string;
  baseCommit: string;
  newCommit: string;
  note?: string;
}

/** Attention's and the matmuls' GPU time in one op-class case (kernels.node.ts opClassSweep), both sides. */
export interface BaselineOpClassPoint {
  model: string;
  case: string;
  /** Medians over rounds of each side's median profiled ms. */
  baseAttentionMs: number;
  newAttentionMs: number;
  baseMatmulMs: number;
  newMatmulMs: number;
  /** base / new: above 1 means the new commit is faster. */
  attentionSpeedup: number;
  matmulSpeedup: number;
}

export interface BaselineReport extends BaselineMeta {
  schema: 1;
  rounds: number;
  points: BaselinePoint[];
  /** The op-class cases both sides measured (absent in reports from before they were compared). */
  opClasses?: BaselineOpClassPoint[];
}

function pointsOf(report: KernelBenchReport, model: string, batch: number) {
  const sweep = report.sweeps.find((s) => s.model === model);
  const point = sweep?.points.find((p) => p.batch === batch);
  return sweep && point ? { stepMs: point.stepMs, gpuMs: point.gpuMs, dispatches: sweep.dispatchesPerStep } : null;
}

/** Pairs each (model, batch) both sides measured; rounds are reports taken in one sitting. */
export function compareKernelReports(base: KernelBenchReport[], next: KernelBenchReport[], meta: BaselineMeta): BaselineReport {
  const first = next[0];
  if (!first || base.length === 0) throw new Error('no rounds to compare');
  const points: BaselinePoint[] = [];
  for (const sweep of first.sweeps) {
    for (const { batch } of sweep.points) {
      const b = base.map((r) => pointsOf(r, sweep.model, batch)).filter((p) => p !== null);
      const n = next.map((r) => pointsOf(r, sweep.model, batch)).filter((p) => p !== null);
      if (b.length === 0 || n.length === 0) continue;
      const baseStepMs = median(b.map((p) => p.stepMs));
      const newStepMs = median(n.map((p) => p.stepMs));
      const baseGpuMs = median(b.map((p) => p.gpuMs));
      const newGpuMs = median(n.map((p) => p.gpuMs));
      points.push({
        model: sweep.model,
        batch,
        baseStepMs,
        newStepMs,
        baseGpuMs,
        newGpuMs,
        stepSpeedup: baseStepMs / newStepMs,
        gpuSpeedup: baseGpuMs / newGpuMs,
        baseDispatches: b[0]!.dispatches,
        newDispatches: n[0]!.dispatches,
      });
    }
  }
  const opClasses: BaselineOpClassPoint[] = [];
  for (const sweep of first.sweeps) {
    for (const { case: name } of sweep.opClasses ?? []) {
      const of = (r: KernelBenchReport) => r.sweeps.find((s) => s.model === sweep.model)?.opClasses?.find((p) => p.case === name);
      const b = base.map(of).filter((p) => p !== undefined);
      const n = next.map(of).filter((p) => p !== undefined);
      if (b.length === 0 || n.length === 0) continue;
      const baseAttentionMs = median(b.map((p) => p.attention.ms));
      const newAttentionMs = median(n.map((p) => p.attention.ms));
      const baseMatmulMs = median(b.map((p) => p.matmul.ms));
      const newMatmulMs = median(n.map((p) => p.matmul.ms));
      opClasses.push({ model: sweep.model, case: name, baseAttentionMs, newAttentionMs, baseMatmulMs, newMatmulMs, attentionSpeedup: baseAttentionMs / newAttentionMs, matmulSpeedup: baseMatmulMs / newMatmulMs });
    }
  }
  return { schema: 1, ...meta, rounds: Math.min(base.length, next.length), points, ...(opClasses.length > 0 ? { opClasses } : {}) };
}

const fmt = (x: number, digits = 1): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

export function renderBaselineMarkdown(r: BaselineReport): string {
  const lines = [
    `# Decode step, ${r.newCommit} vs ${r.baseCommit}, ${r.date}, ${r.machine}`,
    '',
    `Both commits' per-kernel benchmark (\`npm run bench:kernels\`) in ${r.rounds} alternating rounds of one sitting; each cell is the median over rounds of a round's median decode step. Speed-up = ${r.baseCommit} / ${r.newCommit} (above 1: the new commit is faster).`,
    ...(r.note ? ['', `Conditions: ${r.note}`] : []),
    '',
    '| model | B | step ms (base) | step ms (new) | step speed-up | GPU ms (base) | GPU ms (new) | GPU speed-up | dispatches (base / new) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.points.map(
      (p) =>
        `| ${p.model} | ${p.batch} | ${fmt(p.baseStepMs)} | ${fmt(p.newStepMs)} | ${fmt(p.stepSpeedup, 2)}x | ${fmt(p.baseGpuMs)} | ${fmt(p.newGpuMs)} | ${fmt(p.gpuSpeedup, 2)}x | ${p.baseDispatches} / ${p.newDispatches} |`,
    ),
  ];
  if (r.opClasses) {
    lines.push(
      '',
      "Attention and the matmuls in the same profiled steps (bench:kernels' op classes: a 512-token prefill chunk ending at context 1,200, decode rows at 1,230), medians over rounds of each side's median:",
      '',
      '| model | case | attention ms (base) | attention ms (new) | attention speed-up | matmul ms (base) | matmul ms (new) | matmul speed-up |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      ...r.opClasses.map(
        (p) =>
          `| ${p.model} | ${p.case} | ${fmt(p.baseAttentionMs)} | ${fmt(p.newAttentionMs)} | ${fmt(p.attentionSpeedup, 2)}x | ${fmt(p.baseMatmulMs)} | ${fmt(p.newMatmulMs)} | ${fmt(p.matmulSpeedup, 2)}x |`,
      ),
    );
  }
  return lines.join('\n') + '\n';
}

export interface GridBaselinePoint {
  workload: string;
  sessions: number;
  mode: Mode;
  /** Medians over rounds of each side's median decode tok/s. */
  baseTokensPerSec: number;
  newTokensPerSec: number;
  /** new / base: above 1 means the new commit is faster. */
  ratio: number;
}

export interface JoinBaseline {
  figure: 'timeToFirstTokenMs' | 'maxGapDuringJoinMs' | 'medianGapBeforeJoinMs' | 'longestJoinStepMs' | 'maxChunkTokens';
  base: number;
  next: number;
}

/** One speculation case on both commits: medians over rounds of each round's medians. */
export interface SpeculationBaseline {
  name: string;
  /** Decode tok/s with speculation off and on ('auto'), per commit. */
  baseOff: number;
  baseOn: number;
  newOff: number;
  newOn: number;
  /** on / off within each commit, and new / base of the speculating side. */
  baseRatio: number;
  newRatio: number;
  onRatio: number;
}

export interface GridBaselineReport extends BaselineMeta {
  schema: 1;
  rounds: number;
  points: GridBaselinePoint[];
  join: JoinBaseline[];
  /** Absent when neither side ran the speculation grid. */
  speculation?: SpeculationBaseline[];
}

const JOIN_FIGURES: JoinBaseline['figure'][] = ['timeToFirstTokenMs', 'maxGapDuringJoinMs', 'medianGapBeforeJoinMs', 'longestJoinStepMs', 'maxChunkTokens'];

/** Pairs each grid cell (workload, sessions, mode) and each join figure both sides measured. */
export function compareGridReports(base: BenchReport[], next: BenchReport[], meta: BaselineMeta): GridBaselineReport {
  const first = next[0];
  if (!first || base.length === 0) throw new Error('no rounds to compare');
  const cell = (r: BenchReport, workload: string, sessions: number, mode: Mode) => r.throughput.find((p) => p.workload === workload && p.sessions === sessions)?.[mode].medianTokensPerSec;
  const points: GridBaselinePoint[] = [];
  for (const { workload, sessions } of first.throughput) {
    for (const mode of ['batched', 'serialized'] as const) {
      const b = base.map((r) => cell(r, workload, sessions, mode)).filter((x): x is number => x !== undefined);
      const n = next.map((r) => cell(r, workload, sessions, mode)).filter((x): x is number => x !== undefined);
      if (b.length === 0 || n.length === 0) continue;
      const baseTokensPerSec = median(b);
      const newTokensPerSec = median(n);
      points.push({ workload, sessions, mode, baseTokensPerSec, newTokensPerSec, ratio: newTokensPerSec / baseTokensPerSec });
    }
  }
  const joins = (rs: BenchReport[]) => rs.map((r) => r.join?.median).filter((j) => j !== undefined && j !== null);
  const bj = joins(base);
  const nj = joins(next);
  const join = bj.length > 0 && nj.length > 0 ? JOIN_FIGURES.map((figure) => ({ figure, base: median(bj.map((j) => j[figure])), next: median(nj.map((j) => j[figure])) })) : [];
  const speculation = compareSpeculation(base, next);
  return { schema: 1, ...meta, rounds: Math.min(base.length, next.length), points, join, ...(speculation.length > 0 ? { speculation } : {}) };
}

/** The speculation cases both sides ran, by name. */
function compareSpeculation(base: BenchReport[], next: BenchReport[]): SpeculationBaseline[] {
  const sides = (rs: BenchReport[], name: string, side: 'off' | 'on') =>
    rs.flatMap((r) => r.speculation ?? []).filter((p) => p.name === name).map((p) => p[side].medianTokensPerSec);
  const names = [...new Set(next.flatMap((r) => (r.speculation ?? []).map((p) => p.name)))];
  return names.flatMap((name) => {
    const [baseOff, baseOn, newOff, newOn] = [sides(base, name, 'off'), sides(base, name, 'on'), sides(next, name, 'off'), sides(next, name, 'on')];
    if (baseOn.length === 0 || newOn.length === 0) return [];
    const b = { off: median(baseOff), on: median(baseOn) };
    const n = { off: median(newOff), on: median(newOn) };
    return [{ name, baseOff: b.off, baseOn: b.on, newOff: n.off, newOn: n.on, baseRatio: b.on / b.off, newRatio: n.on / n.off, onRatio: n.on / b.on }];
  });
}

export function renderGridBaselineMarkdown(r: GridBaselineReport): string {
  const lines = [
    `# ${r.points.length > 0 ? 'Batching grid' : 'Speculation grid'}, ${r.newCommit} vs ${r.baseCommit}, ${r.date}, ${r.machine}`,
    '',
    `Both commits' \`npm run bench:headless\` (decode tok/s over decode-only steps, src/protocol/metrics.ts) in ${r.rounds} alternating rounds of one sitting; each cell is the median over rounds of a round's median. Ratio = ${r.newCommit} / ${r.baseCommit} (above 1: the new commit is faster).`,
    ...(r.note ? ['', `Conditions: ${r.note}`] : []),
  ];
  if (r.points.length > 0) {
    lines.push('', '| workload | sessions | mode | tok/s (base) | tok/s (new) | ratio |', '|---|---:|---|---:|---:|---:|');
    for (const p of r.points) lines.push(`| ${p.workload} | ${p.sessions} | ${p.mode} | ${fmt(p.baseTokensPerSec)} | ${fmt(p.newTokensPerSec)} | ${fmt(p.ratio, 2)}x |`);
  }
  if (r.join.length > 0) {
    lines.push('', 'A long prompt joining decoding sessions (batched; medians):', '', '| figure | base | new | new / base |', '|---|---:|---:|---:|');
    for (const j of r.join) lines.push(`| ${j.figure} | ${fmt(j.base)} | ${fmt(j.next)} | ${fmt(j.next / j.base, 2)} |`);
  }
  if (r.speculation) {
    lines.push('', "Speculation off vs on ('auto'), batched (`--speculation`; decode tok/s, medians over rounds):", '');
    lines.push('| case | base off | base on | base on / off | new off | new on | new on / off | on: new / base |', '|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const c of r.speculation) {
      lines.push(`| ${c.name} | ${fmt(c.baseOff)} | ${fmt(c.baseOn)} | ${fmt(c.baseRatio, 2)}x | ${fmt(c.newOff)} | ${fmt(c.newOn)} | ${fmt(c.newRatio, 2)}x | ${fmt(c.onRatio, 2)}x |`);
    }
  }
  return lines.join('\n') + '\n';
}
