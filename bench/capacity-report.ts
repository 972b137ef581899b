// The KV capacity benchmark's report: its JSON shape, the checks (f16 and q8_0 hold at least 1.9x
// and 3.5x f32's sessions) and the markdown. Pure (no GPU, no files); the driver is capacity.node.ts.
import type { KvCacheType } from '../src/engine/kv-types';

/** One model, one KV type, one session length: what the pool holds and what the engine admitted. */
export interface CapacityPoint {
  model: string;
  kvCacheType: KvCacheType;
  /** Positions per session. */
  sessionTokens: number;
  /** KV pool blocks from planKvArena (block 0 included) and the bytes the arena took on the device (null: not allocated). */
  numBlocks: number;
  allocatedBytes: number | null;
  /** Sessions that many blocks hold by arithmetic, and the sessions the engine's scheduler held at once. */
  expectedSessions: number;
  admittedSessions: number;
  /** Whether the next session waited (the pool, not a row or token cap, was the limit). */
  nextWaited: boolean;
}

export interface CapacityModel {
  model: string;
  numLayers: number;
  numKvHeads: number;
  headDim: number;
  /** Cohort's K + V bytes per token by type (src/engine/kv-types.ts). */
  cohortBytesPerToken: Record<KvCacheType, number>;
  /** llama.cpp's, read from a real context's KV buffer (null where it could not be made). */
  llamaCppBytesPerToken: Record<KvCacheType, number | null>;
}

export interface CapacityReport {
  date: string;
  budgetBytes: number;
  blockSize: number;
  adapter: string;
  /** The largest KV buffer the bench let a pool use (layers spread over more). */
  maxKvBufferBytes: number;
  llamaCpp: string;
  models: CapacityModel[];
  points: CapacityPoint[];
}

export interface CapacityCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export const MIN_F16_GAIN = 1.9;
export const MIN_Q8_0_GAIN = 3.5;

function point(report: CapacityReport, model: string, type: KvCacheType, tokens: number): CapacityPoint | undefined {
  return report.points.find((p) => p.model === model && p.kvCacheType === type && p.sessionTokens === tokens);
}

/** Admitted sessions of `type` over f32's at the same model and length (NaN when f32 admits none). */
export function gainOverF32(report: CapacityReport, model: string, type: KvCacheType, tokens: number): number {
  const base = point(report, model, 'f32', tokens)?.admittedSessions ?? 0;
  return base > 0 ? (point(report, model, type, tokens)?.admittedSessions ?? 0) / base : Number.NaN;
}

export function capacityChecks(report: CapacityReport): CapacityCheck[] {
  const checks: CapacityCheck[] = [];
  const mismatched = report.points.filter((p) => p.admittedSessions !== p.expectedSessions || !p.nextWaited);
  checks.push({ name: 'the engine admits exactly what the pool holds, and the next session waits', ok: mismatched.length === 0, detail: mismatched.map((p) => `${p.model} ${p.kvCacheType} ${p.sessionTokens}: ${p.admittedSessions} of ${p.expectedSessions}`).join('; ') || `${report.points.length} points` });
  const lengths = [...new Set(report.points.map((p) => p.sessionTokens))];
  for (const [type, least] of [['f16', MIN_F16_GAIN], ['q8_0', MIN_Q8_0_GAIN]] as const) {
    const gains = report.models.flatMap((m) => lengths.map((t) => ({ at: `${m.model} ${t}`, gain: gainOverF32(report, m.model, type, t) })));
    const low = gains.filter((g) => !(g.gain >= least));
    const lowest = Math.min(...gains.map((g) => g.gain));
    checks.push({ name: `${type} holds at least ${least}x f32's sessions`, ok: low.length === 0, detail: low.length ? low.map((g) => `${g.at}: ${g.gain.toFixed(2)}x`).join('; ') : `lowest ${lowest.toFixed(2)}x` });
  }
  return checks;
}

const MiB = 2 ** 20;

export function renderCapacityMarkdown(report: CapacityReport): string {
  const lengths = [...new Set(report.points.map((p) => p.sessionTokens))].sort((a, b) => a - b);
  const types: KvCacheType[] = ['f32', 'f16', 'q8_0'];
  const lines = [
    `# KV capacity: concurrent sessions under one ${(report.budgetBytes / MiB).toFixed(0)} MiB pool (${report.date})`,
    '',
    `Blocks of ${report.blockSize} positions from planKvArena; each pool allocated on ${report.adapter} (buffers of at most ${(report.maxKvBufferBytes / MiB).toFixed(0)} MiB); sessions admitted by the engine's scheduler and block pool (EngineCore over a token-id runner), each holding its full length at once. llama.cpp's bytes per token read from a real context's KV buffer (${report.llamaCpp}; the embedded model's own GGUF, the other shapes' GGUFs synthetic with the same layers, KV heads and head size).`,
    '',
    `| model | KV type | bytes/token (Cohort) | bytes/token (llama.cpp) | ${lengths.map((t) => `sessions @ ${t / 1024}k`).join(' | ')} | ${lengths.map((t) => `vs f32 @ ${t / 1024}k`).join(' | ')} |`,
    `|---|---|---:|---:|${lengths.map(() => '---:').join('|')}|${lengths.map(() => '---:').join('|')}|`,
  ];
  for (const m of report.models) {
    for (const type of types) {
      const sessions = lengths.map((t) => String(point(report, m.model, type, t)?.admittedSessions ?? '-'));
      const gains = lengths.map((t) => `${gainOverF32(report, m.model, type, t).toFixed(2)}x`);
      lines.push(`| ${m.model} | ${type} | ${m.cohortBytesPerToken[type]} | ${m.llamaCppBytesPerToken[type] ?? '-'} | ${sessions.join(' | ')} | ${gains.join(' | ')} |`);
    }
  }
  lines.push('', 'Sessions are whole and block 0 is reserved, so where f32 holds few sessions its rounding down costs it most: the f16 and q8_0 gains then exceed their bytes-per-token ratios (2x, 64/17 = 3.76x).');
  lines.push('', ...capacityChecks(report).map((c) => `- ${c.ok ? 'PASS' : 'FAIL'} ${c.name} (${c.detail})`), '');
  return lines.join('\n');
}
