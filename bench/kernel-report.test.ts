// The per-kernel report's arithmetic: op totals over layers, overhead share, the B=8 ratio.
import { describe, expect, it } from 'vitest';
import { batchRatio, opTotals, overheadShare, renderKernelMarkdown, type ModelSweep } from './kernel-report';
import { median } from '../src/protocol/metrics';

const sweep: ModelSweep = {
  model: 'm',
  weightBytes: 1,
  dispatchesPerStep: 20,
  points: [
    { batch: 1, stepMs: 10, gpuMs: 8, ops: { q_proj: 3, attention: 1 } },
    { batch: 8, stepMs: 40, gpuMs: 38, ops: { q_proj: 20, attention: 9 } },
  ],
};

describe('kernel report', () => {
  it('sums ops over layers', () => {
    expect(opTotals([{ label: 'L0.q_proj', ms: 1 }, { label: 'L11.q_proj', ms: 2 }, { label: 'lm_head', ms: 4 }])).toEqual({ q_proj: 3, lm_head: 4 });
  });
  it('derives overhead share and the B=8 ratio', () => {
    expect(overheadShare(sweep.points[0]!)).toBeCloseTo(0.2);
    expect(batchRatio(sweep)).toBeCloseTo(2);
    expect(median([3, 1, 2, 10])).toBe(2.5);
  });
  it('renders one row per point, the ratio on B=8', () => {
    const md = renderKernelMarkdown({ schema: 1, date: 'd', machine: 'x', adapter: 'a', repeats: 3, sweeps: [sweep] });
    expect(md).toContain('| m | 8 | 40.0 | 38.0 | 5% | 2.00 | 20 | q_proj 20.0, attention 9.0 |');
  });
});
