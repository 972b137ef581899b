// The per-kernel benchmark's report: what one model's B sweep measured, the derived figures the
// GPU runner is judged by, and the markdown table. Arithmetic and formatting only.
import type { ProjectionPoint, RooflineReport } from './roofline';
import type { StepOpPoint } from './step-ops';

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
  /** Achieved rates of attention and matmul in the same profiled steps (prefill chunk, long decode). */
  opClasses?: OpClassPoint[];
}

/** GPU time of one op class in a profiled step and the work it did there. */
export interface OpClassFigures {
  ms: number;
  flop: number;
  /** Bytes the kernels fetch: K/V rows per work item for attention, weights per 8-token tile for matmul. */
  bytes: number;
}

export interface OpClassPoint {
  /** e.g. 'prefill 512 tok @ ctx 1200', 'decode B=8 @ ctx 1230' */
  case: string;
  attention: OpClassFigures;
  matmul: OpClassFigures;
}

/** Layer shapes the op-class arithmetic needs. */
export interface WorkShape {
  numLayers: number;
  numHeads: number;
  headDim: number;
  hidden: number;
  qDim: number;
  kvDim: number;
  intermediate: number;
  vocab: number;
  /** Stored bytes of every layer's q/k/v/o/gate/up/down weights together. */
  linearWeightBytes: number;
  lmHeadBytes: number;
}

/**
 * paged_attention's work over a step's rows: 4 * headDim FLOP per (query, head, key) (q.k and
 * p*v), and the K and V rows each workgroup fetches: a decode row once per head, a prefill row
 * once per head per item of `queriesPerItem` queries (up to the item's last query), plus q and out.
 */
export function attentionWork(shape: WorkShape, rows: { startPos: number; numTokens: number }[], queriesPerItem: number): { flop: number; bytes: number } {
  const { numLayers, numHeads, headDim } = shape;
  let flop = 0;
  let bytes = 0;
  for (const { startPos, numTokens } of rows) {
    for (let j = 0; j < numTokens; j++) flop += 4 * headDim * (startPos + j + 1);
    for (let first = 0; first < numTokens; first += queriesPerItem) {
      const last = Math.min(numTokens, first + queriesPerItem) - 1;
      bytes += 2 * 4 * headDim * (startPos + last + 1) + 2 * 4 * headDim * (last - first + 1);
    }
  }
  return { flop: flop * numHeads * numLayers, bytes: bytes * numHeads * numLayers };
}

/** matmul's work for `tokens` fed and `sampledRows` through lm_head; weights are read once per 8 tokens. */
export function matmulWork(shape: WorkShape, tokens: number, sampledRows: number, tokensPerWeightRead = 8): { flop: number; bytes: number } {
  const { numLayers, hidden, qDim, kvDim, intermediate, vocab } = shape;
  const perToken = 2 * numLayers * (hidden * (qDim + 2 * kvDim) + qDim * hidden + 3 * hidden * intermediate);
  const flop = tokens * perToken + 2 * sampledRows * hidden * vocab;
  const bytes = shape.linearWeightBytes * Math.ceil(tokens / tokensPerWeightRead) + shape.lmHeadBytes * Math.ceil(sampledRows / tokensPerWeightRead);
  return { flop, bytes };
}

/** GFLOP/s and GB/s of one op class. */
export function rates(f: OpClassFigures): { gflops: number; gbs: number } {
  return f.ms > 0 ? { gflops: f.flop / (f.ms * 1e6), gbs: f.bytes / (f.ms * 1e6) } : { gflops: NaN, gbs: NaN };
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
  /** Each projection's matmul against the device's copy bandwidth, both kernel settings (roofline.ts). */
  roofline?: RooflineSection;
  /** Attention and sampling of one shape in profiled decode steps, both kernel settings (step-ops.ts). */
  stepOps?: StepOpPoint[];
}

export interface RooflineSection extends RooflineReport {
  /** Per model: the 'gpu' setting's batch-1 matmuls below 128 workgroups of 64 invocations (none: it holds). */
  launchShortfalls: Record<string, string[]>;
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

/** The roofline table: one line per (model, projection, dtype, tokens), both settings side by side. */
export function renderRoofline(r: RooflineSection): string[] {
  const out = [
    '',
    `Matmul per projection against a plain copy kernel's ${f(r.copy.gbs, 2)} GB/s (${f(r.copy.bytes / 2 ** 20, 0)} MiB moved, same run): workgroups x invocations, GPU ms (median), GB/s of the weights, x and y, and that as % of copy.`,
    '',
    ...Object.entries(r.launchShortfalls).map(([model, short]) =>
      short.length === 0 ? `- ${model}, 'gpu' setting, batch 1: every matmul launches >= 128 workgroups of >= 64 invocations.` : `- ${model}, 'gpu' setting, batch 1: below 128 x 64: ${short.join('; ')}.`,
    ),
    '',
    '| model | projection | dtype | T | gpu: launch | gpu ms | gpu GB/s | gpu % copy | cpu: launch | cpu ms | cpu GB/s | cpu % copy |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const key = (p: ProjectionPoint) => `${p.model}|${p.projection}|${p.dtype}|${p.tokens}`;
  const seen = new Set<string>();
  for (const p of r.points) {
    if (seen.has(key(p))) continue;
    seen.add(key(p));
    const cells = (['gpu', 'cpu'] as const).map((setting) => {
      const q = r.points.find((o) => key(o) === key(p) && o.setting === setting);
      return q ? `${q.workgroups} x ${q.invocationsPerWorkgroup} | ${f(q.ms, 3)} | ${f(q.gbs, 2)} | ${f(100 * q.ofCopy, 0)}%` : '| | |';
    });
    out.push(`| ${p.model} | ${p.projection} | ${p.dtype} | ${p.tokens} | ${cells.join(' | ')} |`);
  }
  return out;
}

/** The step-ops table: one line per case, both settings side by side. */
export function renderStepOps(points: StepOpPoint[], copyGbs: number): string[] {
  const out = [
    '',
    `Attention and sampling in profiled decode steps of a one-layer model of the shape (GPU ms summed over the named dispatches, median): attention's GB/s counts the K and V it must read, sampling's one pass over the logits; % of the copy kernel's ${f(copyGbs, 2)} GB/s; a sampling case's passes over a row's logits in brackets (at most, by sample-plan.ts).`,
    '',
    '| model | case | gpu: dispatches | gpu ms | gpu GB/s | gpu % copy | cpu: dispatches | cpu ms | cpu GB/s | cpu % copy |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const seen = new Set<string>();
  for (const p of points) {
    const key = `${p.model}|${p.case}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const cells = (['gpu', 'cpu'] as const).map((setting) => {
      const q = points.find((o) => o.model === p.model && o.case === p.case && o.setting === setting);
      return q ? `${q.dispatches} | ${f(q.ms, 3)} | ${f(q.gbs, 2)} | ${f(100 * q.ofCopy, 0)}%` : '| | |';
    });
    out.push(`| ${p.model} | ${p.case}${p.vocabPasses === undefined ? '' : ` (${p.vocabPasses} passes)`} | ${cells.join(' | ')} |`);
  }
  return out;
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
  const withClasses = r.sweeps.filter((s) => s.opClasses && s.opClasses.length > 0);
  if (withClasses.length > 0) {
    out.push(
      '',
      'Achieved rates per op class in one profiled step (GPU ms summed over layers; GB/s counts the bytes the kernels fetch, see kernel-report.ts):',
      '',
      '| model | case | attention ms | attention GFLOP/s | attention GB/s | matmul ms | matmul GFLOP/s | matmul GB/s | attention / matmul FLOP/s |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const s of withClasses) {
      for (const c of s.opClasses!) {
        const a = rates(c.attention);
        const m = rates(c.matmul);
        out.push(`| ${s.model} | ${c.case} | ${f(c.attention.ms)} | ${f(a.gflops, 2)} | ${f(a.gbs, 2)} | ${f(c.matmul.ms)} | ${f(m.gflops, 2)} | ${f(m.gbs, 2)} | ${f((100 * a.gflops) / m.gflops, 0)}% |`);
      }
    }
  }
  if (r.roofline) out.push(...renderRoofline(r.roofline));
  if (r.stepOps && r.roofline) out.push(...renderStepOps(r.stepOps, r.roofline.copy.gbs));
  return out.join('\n') + '\n';
}
