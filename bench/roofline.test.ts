// roofline.ts's arithmetic: the projections of a published shape, the bytes a dispatch moves, the
// 'gpu' setting's launch check, and the report's table. The timing itself runs in bench:kernels.
import { describe, expect, it } from 'vitest';
import { MODEL_SHAPES } from '../tools/models/published-shapes';
import { renderRoofline, renderStepOps } from './kernel-report';
import { launchShortfalls, projectionBytes, projections } from './roofline';

describe('roofline', () => {
  const llama = MODEL_SHAPES['Llama-3.2-1B']!;

  it("lists a layer's matmuls and lm_head as the forward program runs them", () => {
    expect(projections(llama).map((p) => [p.name, p.n, p.k])).toEqual([
      ['qkv_proj', 3072, 2048],
      ['o_proj', 2048, 2048],
      ['gate_up_proj', 16384, 2048],
      ['down_proj', 2048, 8192],
      ['lm_head', 128256, 2048],
    ]);
  });

  it('counts the weights once and the activations in and out', () => {
    const down = projections(llama).find((p) => p.name === 'down_proj')!;
    // q4_K: 144 bytes per 256 weights; x 8 x 8192 f32; y read and written (the residual add)
    expect(projectionBytes(down, 'q4_K', 8)).toBe((2048 * 8192 * 144) / 256 + 4 * 8 * 8192 + 2 * 4 * 8 * 2048);
    const gateUp = projections(llama).find((p) => p.name === 'gate_up_proj')!;
    expect(projectionBytes(gateUp, 'f16', 1)).toBe(16384 * 2048 * 2 + 4 * 2048 + 4 * 8192);
  });

  it("holds the 'gpu' setting's batch-1 launches to 128 workgroups of 64 for every Llama-3.2-1B matmul", () => {
    expect(launchShortfalls(llama)).toEqual([]);
    expect(launchShortfalls(llama, 600)).toEqual(['qkv_proj: 384 x 64', 'o_proj: 256 x 64', 'down_proj: 256 x 64']);
  });

  it('puts both settings of a point on one line', () => {
    const point = { model: 'M', projection: 'o_proj' as const, dtype: 'q8_0' as const, tokens: 1, invocationsPerWorkgroup: 64, ms: 2, gbs: 5, ofCopy: 0.5 };
    const lines = renderRoofline({
      copy: { bytes: 2 ** 21, ms: 0.2, gbs: 10 },
      points: [{ ...point, setting: 'gpu', workgroups: 256 }, { ...point, setting: 'cpu', workgroups: 8, ofCopy: 0.25 }],
      launchShortfalls: { M: [] },
    });
    expect(lines.filter((l) => l.startsWith('| M |'))).toEqual(['| M | o_proj | q8_0 | 1 | 256 x 64 | 2.000 | 5.00 | 50% | 8 x 64 | 2.000 | 5.00 | 25% |']);
    expect(lines.some((l) => l.includes('every matmul launches >= 128 workgroups'))).toBe(true);
  });

  it("puts attention and sampling cases of both settings on one line, with a sampler's passes", () => {
    const point = { model: 'M', case: 'sample B=1 T 0.7', dispatches: 7, ms: 1, gbs: 0.5, ofCopy: 0.05, vocabPasses: 4 };
    const lines = renderStepOps([{ ...point, setting: 'gpu' }, { ...point, setting: 'cpu', dispatches: 3 }], 10);
    expect(lines.filter((l) => l.startsWith('| M |'))).toEqual(['| M | sample B=1 T 0.7 (4 passes) | 7 | 1.000 | 0.50 | 5% | 3 | 1.000 | 0.50 | 5% |']);
  });
});
