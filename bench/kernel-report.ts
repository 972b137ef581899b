// The per-kernel benchmark's report: what one model's B sweep measured, the derived figures the
// GPU runner is judged by, and the markdown table. Arithmetic and formatting only.

export interface BatchPoint {
  batch: number;
  /** Median wall time of a decode step: encode, submit, GPU, readback. */
  stepMs: number;
  /** Median GPU time of the step's one pass (timestamp queries). */
  gpuMs: number;
  /** Per-op GPU ms of one profiled step (each dispatch timed alone, summed over layers). */
  ops: Record<string, number>;
}

export interface ModelSweep {
  model: string;
  weightBytes: number;
  dispatchesPerStep: number;
  points: BatchPoint[];
}

export interface KernelBenchReport {
  schema: 1;
  date: string;
  machine: string;
  adapter: string;
  repeats: number;
  /** Conditions worth knowing when reading the numbers (e.g. other load on the machine). */
  note?: string;
  sweeps: ModelSweep[];
}

/** 'L12.q_proj' -> 'q_proj': one entry per op, summed over layers. */
export function opTotals(timings: { label: string; ms: number }[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const { label, ms } of timings) {
    const op = label.replace(/^L\d+\./, '');
    totals[op] = (totals[op] ?? 0) + ms;
  }
  return totals;
}

/** Share of a step that is not GPU work: encoding, submit, readback and scheduling latency. */
export function overheadShare(p: BatchPoint): number {
  return p.stepMs > 0 ? Math.max(0, p.stepMs - p.gpuMs) / p.stepMs : NaN;
}

/** (8 x step(B=1)) / step(B=8): 8 means a cohort of 8 costs what one row does. */
export function batchRatio(sweep: ModelSweep, batch = 8): number {
  const one = sweep.points.find((p) => p.batch === 1);
  const many = sweep.points.find((p) => p.batch === batch);
  return one && many ? (batch * one.stepMs) / many.stepMs : NaN;
}

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

export function renderKernelMarkdown(r: KernelBenchReport): string {
  const out = [
    `# Decode-step breakdown, ${r.date}, ${r.machine}`,
    '',
    `Adapter: ${r.adapter}. Each point: median of ${r.repeats} decode steps (wall and GPU pass time); ops from one step with every dispatch timed in its own pass.`,
    ...(r.note ? ['', `Note: ${r.note}`] : []),
    '',
    '| model | B | step ms | GPU ms | overhead | 8xB1 / B8 | dispatches | top ops (GPU ms) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const s of r.sweeps) {
    const ratio = batchRatio(s);
    for (const p of s.points) {
      const top = Object.entries(p.ops).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([op, ms]) => `${op} ${f(ms)}`).join(', ');
      const ratioCell = p.batch === 8 ? f(ratio, 2) : '';
      out.push(`| ${s.model} | ${p.batch} | ${f(p.stepMs)} | ${f(p.gpuMs)} | ${f(100 * overheadShare(p), 0)}% | ${ratioCell} | ${s.dispatchesPerStep} | ${top} |`);
    }
  }
  return out.join('\n') + '\n';
}
