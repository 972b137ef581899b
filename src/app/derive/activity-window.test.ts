// Tests for the activity panel's window: last N steps after a clear, idle gaps, and the KV
// chart's series with null breaks. Events are built by hand (step-fixtures).
import { describe, expect, it } from 'vitest';
import { row, step } from '../../protocol/testing/step-fixtures';
import { countBreaks, idleGapsBefore, kvSeries, recentSteps } from './activity-window';

describe('recentSteps', () => {
  const records = Array.from({ length: 10 }, (_, i) => ({ i }));

  it('keeps the last N', () => {
    expect(recentSteps(records, null, 3).map((r) => r.i)).toEqual([7, 8, 9]);
    expect(recentSteps(records, null, 2000)).toHaveLength(10);
  });

  it('drops everything up to and including the record that was newest at the clear', () => {
    expect(recentSteps(records, records[9], 500)).toEqual([]);
    expect(recentSteps(records, records[6], 500).map((r) => r.i)).toEqual([7, 8, 9]);
    expect(recentSteps(records, records[6], 2).map((r) => r.i)).toEqual([8, 9]);
  });

  it('shows all when the marker left the ring (overwritten or a model load emptied it)', () => {
    expect(recentSteps(records, { i: 99 }, 500)).toHaveLength(10);
  });
});

describe('idle gaps and the KV series', () => {
  const events = [
    step(0, 0, 100, [row('a', 'decode', 1, [1])], { kvBlocksUsed: 2, queueDepth: 1 }),
    step(1, 100, 100, [row('a', 'decode', 1, [1])], { kvBlocksUsed: 3 }),
    step(2, 5000, 100, [row('a', 'decode', 1, [1])], { kvBlocksUsed: 4 }),
  ];

  it('finds a pause longer than the gap', () => {
    expect(idleGapsBefore(events, 1000)).toEqual([2]);
    expect(idleGapsBefore(events, 10_000)).toEqual([]);
  });

  it('puts a null point inside each gap so the line breaks there', () => {
    const s = kvSeries(events, 0, 1000);
    expect(s.used).toEqual([2, 3, null, 4]);
    expect(s.queue).toEqual([1, 0, null, 0]);
    expect(s.x[0]).toBeCloseTo(0.1);
    expect(s.x[2]).toBeGreaterThan(s.x[1]);
    expect(s.x[2]).toBeLessThan(s.x[3]);
    expect(countBreaks(s.used)).toBe(1);
  });
});

describe('kvSeries on a server backend', () => {
  it('shows busy and idle slots and the deferred requests instead of KV blocks', () => {
    const base = { stepIndex: 0, startedAtMs: 0, elapsedMs: 250, rows: [], numTokens: 0, finished: [], kvBlocksUsed: 0, kvBlocksFree: 0, kvBlocksShared: 0, kvBlocksCached: 0, kvBlocksTotal: 0, kvGroups: [], queueDepth: 1, waiting: [], numRunning: 0, mode: 'batched' as const };
    const events = [
      { ...base, server: { kind: 'llama.cpp' as const, sampled: true as const, numBusy: 3, numSlots: 8, numDeferred: 0 } },
      { ...base, stepIndex: 1, startedAtMs: 250, server: { kind: 'openai' as const, sampled: true as const } },
    ];
    const s = kvSeries(events, 0, 1000);
    expect(s.used).toEqual([3, null]);
    expect(s.free).toEqual([5, null]);
    expect(s.shared).toEqual([null, null]);
    // without the server's own count, the page's view of its queue stands in
    expect(s.queue).toEqual([0, 1]);
  });
});
