// The per-kernel report's arithmetic: op totals over layers, overhead share, the B=8 ratio.
import { describe, expect, it } from 'vitest';
import { attentionWork, batchRatio, matmulWork, opTotals, overheadShare, rates, renderKernelMarkdown, type ModelSweep, type WorkShape } from './kernel-report';
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
  it('counts attention and matmul work and renders their rates', () => {
    const shape: WorkShape = { numLayers: 2, numHeads: 3, headDim: 4, hidden: 8, qDim: 12, kvDim: 4, intermediate: 16, vocab: 10, linearWeightBytes: 1000, lmHeadBytes: 100 };
    // one decode row at context 5, one 3-token chunk at positions 2..4 cut into items of 2 queries
    const work = attentionWork(shape, [{ startPos: 4, numTokens: 1 }, { startPos: 2, numTokens: 3 }], 2);
    expect(work.flop).toBe(4 * 4 * (5 + 3 + 4 + 5) * 3 * 2);
    expect(work.bytes).toBe(2 * 4 * 4 * (5 + 1 + 4 + 2 + 5 + 1) * 3 * 2);
    const mm = matmulWork(shape, 9, 2);
    expect(mm.flop).toBe(9 * 2 * 2 * (8 * 20 + 12 * 8 + 3 * 8 * 16) + 2 * 2 * 8 * 10);
    expect(mm.bytes).toBe(1000 * 2 + 100);
    expect(rates({ ms: 2, flop: 4e6, bytes: 2e6 })).toEqual({ gflops: 2, gbs: 1 });
    const md = renderKernelMarkdown({ schema: 1, date: 'd', machine: 'x', adapter: 'a', repeats: 3, sweeps: [{ ...sweep, opClasses: [{ case: 'prefill', attention: { ms: 2, flop: 2e6, bytes: 4e6 }, matmul: { ms: 1, flop: 4e6, bytes: 1e6 } }] }] });
    expect(md).toContain('| m | prefill | 2.0 | 1.00 | 2.00 | 1.0 | 4.00 | 1.00 | 25% |');
  });

  it('renders one row per point, the ratio on B=8', () => {
    const md = renderKernelMarkdown({ schema: 1, date: 'd', machine: 'x', adapter: 'a', repeats: 3, sweeps: [sweep] });
    expect(md).toContain('| m | 8 | 40.0 | 38.0 | 5% | 2.00 | 20 | q_proj 20.0, attention 9.0 |');
  });
});
