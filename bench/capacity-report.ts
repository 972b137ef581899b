// The capacity benchmark's report: llama.cpp's KV bytes per token by its own formula (ggml type
// sizes), the JSON shape, the f16 / q8_0 vs f32 ratios against the target, and the markdown. Pure.
import type { KvCacheType } from '../src/model/kv-types';

/** ggml's block size (values) and type size (bytes) per KV cache type, as in ggml.c's type_traits. */
const GGML_TYPE_TRAITS: Record<KvCacheType, { blockValues: number; typeBytes: number }> = {
  f32: { blockValues: 1, typeBytes: 4 },
  f16: { blockValues: 1, typeBytes: 2 },
  q8_0: { blockValues: 32, typeBytes: 34 },
};

/** ggml_row_size(type, n): bytes of n values of one row. */
export function ggmlRowSize(type: KvCacheType, n: number): number {
  const t = GGML_TYPE_TRAITS[type];
  if (n % t.blockValues !== 0) throw new Error(`ggml ${type} rows hold multiples of ${t.blockValues} values, not ${n}`);
  return (t.typeBytes * n) / t.blockValues;
}

/**
 * llama.cpp's KV cache bytes for one token (one cell): for every layer, a K row of
 * n_embd_k_gqa = n_head_kv * n_embd_head_k values in type_k and a V row of n_embd_v_gqa in type_v
 * (llama-kv-cache.cpp's ggml_new_tensor_3d(type_k, n_embd_head_k, n_head_kv, kv_size) per layer).
 */
export function llamaCppKvBytesPerToken(type: KvCacheType, numLayers: number, numKvHeads: number, headDim: number): number {
  return numLayers * (ggmlRowSize(type, numKvHeads * headDim) + ggmlRowSize(type, numKvHeads * headDim));
}

/** Sessions of `tokens` a llama.cpp context of `budgetBytes` holds: its cells shared by every sequence (one unified cache). */
export function llamaCppSessions(budgetBytes: number, bytesPerToken: number, tokens: number): number {
  return Math.floor(Math.floor(budgetBytes / bytesPerToken) / tokens);
}

export interface SessionCount {
  tokens: number;
  /** Peak sessions holding their whole prompt in the pool at once, stepped through the engine's scheduler. */
  admitted: number;
  /** What the model card says (src/app/model/kv-figures.ts sessionsThatFit over the same pool). */
  card: number;
  /** llama.cpp's sessions for the same budget (its bytes per token, unified cells). */
  llamaCpp: number;
  requests: number;
  completed: number;
  preemptions: number;
}

export interface CapacityRow {
  model: string;
  type: KvCacheType;
  /** K + V of one token, every layer, in Cohort's pool (src/model/kv-types.ts). */
  bytesPerToken: number;
  llamaCppBytesPerToken: number;
  /** llama.cpp's own figure for its allocated cache (node-llama-cpp, from its log), null when not measured. */
  llamaCppMeasuredBytesPerToken: number | null;
  numBlocks: number;
  poolBytes: number;
  sessions: SessionCount[];
}

export interface CapacityReport {
  date: string;
  commit: string;
  budgetBytes: number;
  blockSize: number;
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number };
  shapes: { name: string; numLayers: number; numKvHeads: number; headDim: number; source: string }[];
  rows: CapacityRow[];
  /** How the llama.cpp column was confirmed (or why it was not). */
  llamaCppNote: string;
  /** Cells of the contexts llama.cpp was measured with (its log's two decimals of MiB then bound each figure to 0.01 MiB / cells). */
  llamaCppCells: number | null;
  note?: string;
}

/** The issue's target: sessions at the same budget, f16 and q8_0 against f32. */
export const CAPACITY_TARGETS: Record<Exclude<KvCacheType, 'f32'>, number> = { f16: 1.9, q8_0: 3.5 };

export interface CapacityRatio {
  model: string;
  tokens: number;
  type: Exclude<KvCacheType, 'f32'>;
  ratio: number;
  target: number;
  met: boolean;
}

/** Admitted sessions of each type over f32's, per model and length. */
export function capacityRatios(rows: readonly CapacityRow[]): CapacityRatio[] {
  const out: CapacityRatio[] = [];
  for (const base of rows.filter((r) => r.type === 'f32')) {
    for (const row of rows.filter((r) => r.model === base.model && r.type !== 'f32')) {
      const type = row.type as Exclude<KvCacheType, 'f32'>;
      for (const s of row.sessions) {
        const f32 = base.sessions.find((b) => b.tokens === s.tokens);
        if (!f32 || f32.admitted === 0) continue;
        const ratio = s.admitted / f32.admitted;
        out.push({ model: row.model, tokens: s.tokens, type, ratio, target: CAPACITY_TARGETS[type], met: ratio >= CAPACITY_TARGETS[type] });
      }
    }
  }
  return out;
}

/**
 * Every row checked: all sessions completed, the admitted count equals the card's, and llama.cpp's
 * measured bytes equal its formula's within the rounding of its log (K and V each to 0.005 MiB over `cells`).
 */
export function admissionProblems(rows: readonly CapacityRow[], cells: number | null = null): string[] {
  const tolerance = cells ? (0.01 * 2 ** 20) / cells : 0;
  const problems: string[] = [];
  for (const r of rows) {
    for (const s of r.sessions) {
      if (s.completed !== s.requests) problems.push(`${r.model} ${r.type} ${s.tokens}: ${s.requests - s.completed} of ${s.requests} sessions did not complete`);
      if (s.admitted !== s.card) problems.push(`${r.model} ${r.type} ${s.tokens}: the scheduler held ${s.admitted} at once, the card says ${s.card}`);
    }
    if (r.llamaCppMeasuredBytesPerToken !== null && Math.abs(r.llamaCppMeasuredBytesPerToken - r.llamaCppBytesPerToken) > tolerance) {
      problems.push(`${r.model} ${r.type}: llama.cpp allocated ${r.llamaCppMeasuredBytesPerToken.toFixed(1)} bytes a token, its formula says ${r.llamaCppBytesPerToken}`);
    }
  }
  return problems;
}

const MiB = 2 ** 20;
const n = (x: number) => x.toLocaleString('en-US');

/** The capacity table (README and report): one line per model and type. */
export function capacityTable(report: CapacityReport): string {
  const lengths = report.rows[0]?.sessions.map((s) => s.tokens) ?? [];
  const ratioOf = (row: CapacityRow, tokens: number) => {
    const f32 = report.rows.find((r) => r.model === row.model && r.type === 'f32')?.sessions.find((s) => s.tokens === tokens);
    const mine = row.sessions.find((s) => s.tokens === tokens)!;
    return f32 && f32.admitted > 0 ? `${(mine.admitted / f32.admitted).toFixed(2)}x` : '-';
  };
  const head = [
    `| model | KV type | bytes / token (Cohort) | bytes / token (llama.cpp) | ${lengths.map((t) => `sessions of ${t / 1024}k (vs f32) | llama.cpp at ${t / 1024}k`).join(' | ')} |`,
    `| --- | --- | ---: | ---: | ${lengths.map(() => '---: | ---:').join(' | ')} |`,
  ];
  const lines = report.rows.map((r) => {
    const llama = r.llamaCppMeasuredBytesPerToken === null ? n(r.llamaCppBytesPerToken) : `${n(r.llamaCppBytesPerToken)} (measured ${n(Math.round(r.llamaCppMeasuredBytesPerToken))})`;
    const cells = r.sessions.map((s) => `${n(s.admitted)} (${ratioOf(r, s.tokens)}) | ${n(s.llamaCpp)}`);
    return `| ${r.model} | ${r.type} | ${n(r.bytesPerToken)} | ${llama} | ${cells.join(' | ')} |`;
  });
  return [...head, ...lines].join('\n');
}

export function renderMarkdown(report: CapacityReport): string {
  const ratios = capacityRatios(report.rows);
  const problems = admissionProblems(report.rows, report.llamaCppCells);
  const missed = ratios.filter((r) => !r.met);
  const minOf = (type: 'f16' | 'q8_0') => Math.min(...ratios.filter((r) => r.type === type).map((r) => r.ratio));
  return [
    `# KV capacity, ${report.date} (${report.commit})`,
    '',
    `Sessions that fit a ${n(report.budgetBytes / MiB)} MiB KV budget, per storage type, admitted by the engine's own Scheduler / KVCacheManager / BlockPool over a pool of the block count GpuRunner plans for that budget and type (planKvArena, ${report.blockSize}-token blocks, one binding of at most ${n(report.limits.maxStorageBufferBindingSize / MiB)} MiB a layer). Each session: a prompt of its length less 8 tokens (no prefix shared), then 8 generated, stepped on a FakeRunner until all end; "sessions" is the most that held their whole prompt at once (more were sent: every one completed, none preempted unless listed). llama.cpp's column: its cache holds floor(budget / bytes per token) cells for all sequences together.`,
    '',
    capacityTable(report),
    '',
    `f16 / f32: at least ${minOf('f16').toFixed(2)}x (target ${CAPACITY_TARGETS.f16}x); q8_0 / f32: at least ${minOf('q8_0').toFixed(2)}x (target ${CAPACITY_TARGETS.q8_0}x).${missed.length ? ` Missed: ${missed.map((m) => `${m.model} ${m.type} ${m.tokens}: ${m.ratio.toFixed(2)}x`).join('; ')}.` : ' Every model and length meets both.'}`,
    '',
    `Admission check: ${problems.length === 0 ? 'every run completed all its sessions, and the scheduler held exactly as many at once as the model card says fit.' : problems.join('; ')}`,
    '',
    `Preemptions: ${report.rows.flatMap((r) => r.sessions).reduce((k, s) => k + s.preemptions, 0)}.`,
    '',
    `llama.cpp: ${report.llamaCppNote}`,
    '',
    'Shapes:',
    ...report.shapes.map((s) => `- ${s.name}: ${s.numLayers} layers x ${s.numKvHeads} KV heads x ${s.headDim} (${s.source})`),
    ...(report.note ? ['', `Conditions: ${report.note}`] : []),
    '',
  ].join('\n');
}
