// Tests of the throughput helpers on hand-built StepEvents (times are data here, not measured).
// Event production itself is tested with the engine loop.
import { describe, expect, it } from 'vitest';
import type { StepEvent, StepRowEvent } from './events';
import { aggregateThroughput, recentThroughput, sessionThroughput, throughputBySession } from './telemetry';

function row(sessionId: string, kind: 'prefill' | 'decode', numTokens: number, sampled: boolean): StepRowEvent {
  return {
    sessionId,
    requestId: `${sessionId}:1`,
    kind,
    numTokens,
    position: 0,
    newTokenIds: sampled ? Int32Array.of(7) : new Int32Array(0),
    newText: '',
  };
}

function step(stepIndex: number, startedAtMs: number, elapsedMs: number, rows: StepRowEvent[]): StepEvent {
  return {
    stepIndex,
    startedAtMs,
    elapsedMs,
    rows,
    numTokens: rows.reduce((n, r) => n + r.numTokens, 0),
    finished: [],
    kvBlocksUsed: 0,
    kvBlocksFree: 10,
    kvBlocksShared: 0,
    kvBlocksCached: 0,
    kvBlocksTotal: 10,
    queueDepth: 0,
    waiting: [],
    numRunning: rows.length,
    mode: 'batched',
  };
}

// a: prefill (sampling its first token) then 3 decodes; b joins at step 2 and decodes twice
const events = [
  step(0, 0, 10, [row('a', 'prefill', 50, true)]),
  step(1, 10, 10, [row('a', 'decode', 1, true)]),
  step(2, 20, 10, [row('a', 'decode', 1, true), row('b', 'prefill', 8, true)]),
  step(3, 30, 10, [row('a', 'decode', 1, true), row('b', 'decode', 1, true)]),
  step(4, 40, 10, [row('b', 'decode', 1, true)]),
];

describe('telemetry', () => {
  it('per session: its tokens over the span of the steps it rode in', () => {
    expect(sessionThroughput(events, 'a')).toEqual({
      numSampledTokens: 4,
      numDecodeTokens: 3,
      numFedTokens: 53,
      numSteps: 4,
      elapsedMs: 40,
      sampledTokensPerSec: 100,
      decodeTokensPerSec: 75,
    });
    expect(sessionThroughput(events, 'b')).toMatchObject({ numSampledTokens: 3, numDecodeTokens: 2, elapsedMs: 30 });
    expect(sessionThroughput(events, 'nobody').numSteps).toBe(0);
  });

  it('aggregate: all tokens over the whole span', () => {
    expect(aggregateThroughput(events)).toMatchObject({ numSampledTokens: 7, numDecodeTokens: 5, elapsedMs: 50, decodeTokensPerSec: 100 });
    expect(aggregateThroughput([]).sampledTokensPerSec).toBe(0);
  });

  it('recent: only the steps inside the window', () => {
    expect(recentThroughput(events, 20)).toMatchObject({ numSteps: 2, numSampledTokens: 3, elapsedMs: 20 });
    expect([...throughputBySession(events).keys()]).toEqual(['a', 'b']);
  });
});
