// Tests for the UI's tok/s chart: decode-only counting per step and the windowed series.
// Events are built by hand so every expected number can be checked on paper.
import { describe, expect, it } from 'vitest';
import { row, step } from '../../protocol/testing/step-fixtures';
import { countStepTokens, throughputSeries } from './throughput';

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
