// Tests for the UI's tok/s derivations: decode-only counting, run rates, the windowed series.
// Events are built by hand so every expected number can be checked on paper.
import { describe, expect, it } from 'vitest';
import { row, step } from './step-fixtures';
import { countStepTokens, decodeRate, speedup, throughputSeries } from './throughput';

describe('countStepTokens', () => {
  it('counts sampled tokens of every row but decode tokens of decode rows only', () => {
    const counts = countStepTokens(
      step(0, 0, 10, [row('a', 'prefill', 40, [7]), row('b', 'decode', 1, [8]), row('c', 'decode', 1, [9]), row('d', 'prefill', 16)]),
    );
    expect(counts.numSampledTokens).toBe(3);
    expect(counts.numDecodeTokens).toBe(2);
    expect([...counts.decodeBySession]).toEqual([
      ['b', 1],
      ['c', 1],
    ]);
  });

  it('does not count a cancelled decode row that sampled nothing', () => {
    expect(countStepTokens(step(0, 0, 10, [row('a', 'decode', 1, [])])).numDecodeTokens).toBe(0);
  });
});

describe('decodeRate', () => {
  const events = [
    step(0, 0, 100, [row('a', 'prefill', 30, [1]), row('b', 'prefill', 30, [2])]),
    step(1, 100, 50, [row('a', 'decode', 1, [3]), row('b', 'decode', 1, [4])]),
    step(2, 150, 50, [row('a', 'decode', 1, [5])]),
    step(3, 300, 100, [row('c', 'decode', 1, [6])]),
  ];

  it('divides decode tokens by the wall span of the counted steps', () => {
    const all = decodeRate(events);
    expect(all.numDecodeTokens).toBe(4);
    expect(all.numSteps).toBe(4);
    expect(all.elapsedMs).toBe(400);
    expect(all.tokensPerSec).toBe(10);
  });

  it('restricts to the given sessions and to the steps they rode in', () => {
    const ab = decodeRate(events, new Set(['a', 'b']));
    expect(ab.numDecodeTokens).toBe(3);
    expect(ab.numSteps).toBe(3);
    expect(ab.elapsedMs).toBe(200);
    expect(ab.tokensPerSec).toBe(15);
  });

  it('is zero, not NaN, without steps', () => {
    expect(decodeRate([], new Set(['x']))).toEqual({ numDecodeTokens: 0, numSteps: 0, elapsedMs: 0, tokensPerSec: 0 });
    expect(decodeRate(events, new Set(['nobody'])).tokensPerSec).toBe(0);
  });

  it('gives the batched/serialized ratio, or null without a baseline', () => {
    const fast = { numDecodeTokens: 80, numSteps: 10, elapsedMs: 1000, tokensPerSec: 80 };
    const slow = { numDecodeTokens: 80, numSteps: 80, elapsedMs: 4000, tokensPerSec: 20 };
    expect(speedup(fast, slow)).toBe(4);
    expect(speedup(fast, { ...slow, tokensPerSec: 0 })).toBeNull();
  });
});

describe('throughputSeries', () => {
  it('reports the trailing window, shortened at the start of a segment', () => {
    // Two sessions decode one token each per 100 ms step.
    const events = Array.from({ length: 20 }, (_, i) => step(i, 1000 + i * 100, 100, [row('a', 'decode', 1, [1]), row('b', 'decode', 1, [2])]));
    const series = throughputSeries(events, 1000, 1000, ['a', 'b']);
    expect(series.x).toHaveLength(20);
    expect(series.x[0]).toBeCloseTo(0.1);
    // Every point: 2 tokens per 100 ms = 20 tok/s, 10 tok/s each; also in the first, short windows.
    for (const value of series.aggregate) expect(value).toBeCloseTo(20);
    for (const value of series.bySession.get('a')!) expect(value).toBeCloseTo(10);
  });

  it('sees a session leave the cohort', () => {
    const events = Array.from({ length: 30 }, (_, i) =>
      step(i, i * 100, 100, i < 10 ? [row('a', 'decode', 1, [1]), row('b', 'decode', 1, [2])] : [row('a', 'decode', 1, [1])]),
    );
    const series = throughputSeries(events, 0, 1000, ['a', 'b']);
    expect(series.aggregate[9]).toBeCloseTo(20);
    expect(series.aggregate[29]).toBeCloseTo(10);
    expect(series.bySession.get('b')![29]).toBe(0);
  });

  it('breaks the line across an idle gap longer than the window', () => {
    const events = [step(0, 0, 100, [row('a', 'decode', 1, [1])]), step(1, 100, 100, [row('a', 'decode', 1, [1])]), step(2, 5000, 100, [row('a', 'decode', 1, [1])])];
    const series = throughputSeries(events, 0, 1000, ['a']);
    expect(series.aggregate).toEqual([10, 10, null, 10]);
    expect(series.bySession.get('a')).toEqual([10, 10, null, 10]);
    expect(series.x[2]).toBeGreaterThan(series.x[1]);
    expect(series.x[2]).toBeLessThan(series.x[3]);
  });

  it('counts prefill-sampled first tokens as no decode throughput', () => {
    const series = throughputSeries([step(0, 0, 100, [row('a', 'prefill', 64, [1])])], 0, 1000, ['a']);
    expect(series.aggregate).toEqual([0]);
  });
});
