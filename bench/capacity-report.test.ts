// The capacity report's checks and markdown over a hand-made report: gains over f32, an admission
// short of the pool, a gain below the bar. Pure.
import { describe, expect, it } from 'vitest';
import { capacityChecks, gainOverF32, renderCapacityMarkdown, type CapacityPoint, type CapacityReport } from './capacity-report';

function report(sessions: { f32: number; f16: number; q8_0: number }, admittedQ8 = sessions.q8_0): CapacityReport {
  const points: CapacityPoint[] = (['f32', 'f16', 'q8_0'] as const).map((type) => ({
    model: 'm', kvCacheType: type, sessionTokens: 2048, numBlocks: 1 + 128 * sessions[type], allocatedBytes: 1, expectedSessions: sessions[type],
    admittedSessions: type === 'q8_0' ? admittedQ8 : sessions[type], nextWaited: true,
  }));
  return {
    date: '2026-12-03', budgetBytes: 2 ** 30, blockSize: 16, adapter: 'test', maxKvBufferBytes: 2 ** 29, llamaCpp: 'test',
    models: [{ model: 'm', numLayers: 1, numKvHeads: 1, headDim: 32, cohortBytesPerToken: { f32: 256, f16: 128, q8_0: 68 }, llamaCppBytesPerToken: { f32: 256, f16: 128, q8_0: null } }],
    points,
  };
}

describe('capacity report', () => {
  it('passes 2x and 3.76x, and renders every type with its gain', () => {
    const r = report({ f32: 100, f16: 200, q8_0: 376 });
    expect(gainOverF32(r, 'm', 'q8_0', 2048)).toBeCloseTo(3.76);
    expect(capacityChecks(r).every((c) => c.ok)).toBe(true);
    const md = renderCapacityMarkdown(r);
    expect(md).toContain('| m | q8_0 | 68 | - | 376 | 3.76x |');
    expect(md).toContain('PASS f16 holds at least 1.9x');
  });

  it('fails a gain under the bar and an admission short of the pool', () => {
    const low = capacityChecks(report({ f32: 100, f16: 180, q8_0: 376 }));
    expect(low.find((c) => c.name.startsWith('f16'))).toMatchObject({ ok: false, detail: 'm 2048: 1.80x' });
    const short = capacityChecks(report({ f32: 100, f16: 200, q8_0: 376 }, 370));
    expect(short[0]).toMatchObject({ ok: false, detail: 'm q8_0 2048: 370 of 376' });
  });
});
