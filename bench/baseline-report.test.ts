// Checks the new-vs-earlier-commit arithmetic on hand-built kernel reports: medians over rounds,
// ratios (base / new) and cells only one side measured left out. No benchmark runs here.
import { describe, expect, it } from 'vitest';
import { compareGridReports, compareKernelReports, renderBaselineMarkdown, renderGridBaselineMarkdown } from './baseline-report';
import type { KernelBenchReport } from './kernel-report';
import type { BenchReport } from './report';

function report(stepMs: Record<number, number>, dispatches = 60): KernelBenchReport {
  const points = Object.entries(stepMs).map(([batch, ms]) => ({ batch: Number(batch), stepMs: ms, gpuMs: ms - 1, ops: {} }));
  return { schema: 1, date: '2026-12-01', machine: 'm', adapter: 'a', repeats: 3, sweeps: [{ model: 'tiny', weightBytes: 1, dispatchesPerStep: dispatches, points }] };
}

describe('compareKernelReports', () => {
  it('takes medians over rounds and gives base / new per cell', () => {
    const base = [report({ 1: 10, 8: 30 }), report({ 1: 12, 8: 34 }), report({ 1: 11, 8: 32 })];
    const next = [report({ 1: 5, 8: 16 }, 40), report({ 1: 6, 8: 15 }, 40), report({ 1: 50, 8: 17, 16: 20 }, 40)];
    const r = compareKernelReports(base, next, { date: 'd', machine: 'm', baseCommit: 'aaa', newCommit: 'bbb' });
    expect(r.rounds).toBe(3);
    expect(r.points).toHaveLength(2); // B=16 only on one side
    expect(r.points[0]).toMatchObject({ batch: 1, baseStepMs: 11, newStepMs: 6, baseGpuMs: 10, newGpuMs: 5, baseDispatches: 60, newDispatches: 40 });
    expect(r.points[0]!.stepSpeedup).toBeCloseTo(11 / 6);
    expect(r.points[1]!.gpuSpeedup).toBeCloseTo(31 / 15);
    expect(renderBaselineMarkdown(r)).toContain('| tiny | 8 | 32.0 | 16.0 | 2.00x |');
  });

  it("pairs the op-class cases both sides measured: attention's and the matmuls' medians and base / new", () => {
    const withOps = (attentionMs: number, matmulMs: number): KernelBenchReport => {
      const r = report({ 1: 10 });
      const figures = (ms: number) => ({ ms, flop: 0, bytes: 0 });
      r.sweeps[0]!.opClasses = [{ case: 'prefill 512', attention: figures(attentionMs), matmul: figures(matmulMs) }];
      return r;
    };
    const r = compareKernelReports([withOps(600, 500), withOps(700, 520)], [withOps(400, 510), withOps(300, 490)], { date: 'd', machine: 'm', baseCommit: 'aaa', newCommit: 'bbb' });
    expect(r.opClasses).toEqual([{ model: 'tiny', case: 'prefill 512', baseAttentionMs: 650, newAttentionMs: 350, baseMatmulMs: 510, newMatmulMs: 500, attentionSpeedup: 650 / 350, matmulSpeedup: 510 / 500 }]);
    expect(renderBaselineMarkdown(r)).toContain('| tiny | prefill 512 | 650.0 | 350.0 | 1.86x | 510.0 | 500.0 | 1.02x |');
    expect(compareKernelReports([report({ 1: 10 })], [report({ 1: 10 })], { date: 'd', machine: 'm', baseCommit: 'a', newCommit: 'b' }).opClasses).toBeUndefined();
  });

  it('refuses to compare nothing', () => {
    expect(() => compareKernelReports([], [], { date: 'd', machine: 'm', baseCommit: 'a', newCommit: 'b' })).toThrow(/no rounds/);
  });
});

describe('compareGridReports', () => {
  function grid(batched: number, serialized: number, ttftMs: number | null): BenchReport {
    const mode = (tokensPerSec: number) => ({ medianTokensPerSec: tokensPerSec, runs: [] });
    const join = ttftMs === null ? null : { timeToFirstTokenMs: ttftMs, maxGapDuringJoinMs: ttftMs / 2, medianGapBeforeJoinMs: 10, longestJoinStepMs: ttftMs / 4, maxChunkTokens: 512, joinPromptTokens: 1900, joinSteps: 4 };
    return {
      throughput: [{ workload: 'niah', sessions: 8, batched: mode(batched), serialized: mode(serialized), speedup: batched / serialized, efficiency: 0, outputsMatch: true }],
      join: join && { decoders: 4, runs: [join], median: join },
      date: '2026-12-01',
      machine: 'm',
    } as unknown as BenchReport;
  }

  it('gives new / base per cell and mode, and the join figures side by side', () => {
    const r = compareGridReports([grid(40, 30, 20000), grid(44, 32, 30000)], [grid(120, 60, 5000), grid(100, 50, 6000)], { date: 'd', machine: 'm', baseCommit: 'aaa', newCommit: 'bbb' });
    expect(r.points).toEqual([
      { workload: 'niah', sessions: 8, mode: 'batched', baseTokensPerSec: 42, newTokensPerSec: 110, ratio: 110 / 42 },
      { workload: 'niah', sessions: 8, mode: 'serialized', baseTokensPerSec: 31, newTokensPerSec: 55, ratio: 55 / 31 },
    ]);
    expect(r.join.find((j) => j.figure === 'timeToFirstTokenMs')).toEqual({ figure: 'timeToFirstTokenMs', base: 25000, next: 5500 });
    expect(renderGridBaselineMarkdown(r)).toContain('| niah | 8 | batched | 42.0 | 110.0 | 2.62x |');
  });

  it('sets each speculation case side by side: on / off per commit, and the speculating side new / base', () => {
    const side = (tokensPerSec: number) => ({ medianTokensPerSec: tokensPerSec, runs: [], acceptanceRate: 0.9, tokensPerRowStep: 2 });
    const withSpeculation = (off: number, on: number): BenchReport => ({ ...grid(40, 30, null), speculation: [{ name: 'NIAH x1', workload: 'niah', sessions: 1, prediction: false, off: side(off), on: side(on), ratio: on / off, outputsMatch: true }] }) as BenchReport;
    const r = compareGridReports([withSpeculation(60, 60), withSpeculation(62, 54), grid(40, 30, null)], [withSpeculation(61, 70), withSpeculation(59, 72)], { date: 'd', machine: 'm', baseCommit: 'aaa', newCommit: 'bbb' });
    expect(r.speculation).toEqual([{ name: 'NIAH x1', baseOff: 61, baseOn: 57, newOff: 60, newOn: 71, baseRatio: 57 / 61, newRatio: 71 / 60, onRatio: 71 / 57 }]);
    expect(renderGridBaselineMarkdown(r)).toContain('| NIAH x1 | 61.0 | 57.0 | 0.93x | 60.0 | 71.0 | 1.18x | 1.25x |');
    expect(compareGridReports([grid(40, 30, null)], [grid(40, 30, null)], { date: 'd', machine: 'm', baseCommit: 'a', newCommit: 'b' }).speculation).toBeUndefined();
  });

  it('leaves the join out when a side has none', () => {
    expect(compareGridReports([grid(1, 1, null)], [grid(2, 1, 100)], { date: 'd', machine: 'm', baseCommit: 'a', newCommit: 'b' }).join).toEqual([]);
  });
});
