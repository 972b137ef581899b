// New vs an earlier commit: per-kernel benchmark reports of both, taken in alternating rounds of
// one sitting, paired into medians and new/old ratios, and the markdown table. Arithmetic only.
import { median } from '../src/protocol/metrics';
import type { KernelBenchReport } from './kernel-report';

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

export interface BaselineReport {
  schema: 1;
  date: string;
  machine: string;
  baseCommit: string;
  newCommit: string;
  rounds: number;
  note?: string;
  points: BaselinePoint[];
}

function pointsOf(report: KernelBenchReport, model: string, batch: number) {
  const sweep = report.sweeps.find((s) => s.model === model);
  const point = sweep?.points.find((p) => p.batch === batch);
  return sweep && point ? { stepMs: point.stepMs, gpuMs: point.gpuMs, dispatches: sweep.dispatchesPerStep } : null;
}

/** Pairs each (model, batch) both sides measured; rounds are reports taken in one sitting. */
export function compareKernelReports(base: KernelBenchReport[], next: KernelBenchReport[], meta: Omit<BaselineReport, 'schema' | 'points' | 'rounds'>): BaselineReport {
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
  return { schema: 1, ...meta, rounds: Math.min(base.length, next.length), points };
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
  return lines.join('\n') + '\n';
}
