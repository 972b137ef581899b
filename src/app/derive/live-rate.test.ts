// Tests for the header's aggregate tok/s: the window is the last few seconds of steps, and the
// figure is exactly decodeThroughput's over those steps (prefill steps left out as it does).
import { describe, expect, it } from 'vitest';
import { decodeThroughput } from '../../protocol/metrics';
import { row, step } from '../../protocol/testing/step-fixtures';
import { liveDecodeRate, recentSteps } from './live-rate';

describe('live decode rate', () => {
  const steps = [
    step(0, 0, 100, [row('s1', 'prefill', 40, [1])]),
    step(1, 100, 50, [row('s1', 'decode', 1, [2]), row('s2', 'decode', 1, [3])]),
    step(2, 5000, 50, [row('s1', 'decode', 1, [4]), row('s2', 'decode', 1, [5])]),
    step(3, 5050, 50, [row('s1', 'decode', 1, [6]), row('s2', 'decode', 1, [7]), row('s3', 'prefill', 9, [8])]),
    step(4, 5100, 25, [row('s1', 'decode', 1, [9])]),
  ];

  it('keeps only the steps that ended within the window of the newest', () => {
    expect(recentSteps(steps, 2000).map((s) => s.stepIndex)).toEqual([2, 3, 4]);
    expect(recentSteps([], 2000)).toEqual([]);
  });

  it('is decodeThroughput over the window, and null with no decode-only step', () => {
    const rate = liveDecodeRate(steps, 2000)!;
    expect(rate).toEqual(decodeThroughput(steps.slice(2)));
    expect(rate.decodeTokens).toBe(3);
    expect(rate.tokensPerSec).toBeCloseTo(3 / 0.075, 6);
    expect(liveDecodeRate(steps.slice(0, 1), 2000)).toBeNull();
  });
});
