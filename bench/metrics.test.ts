// Checks the benchmark's run-level arithmetic on hand-built step records: time to first token and
// the join window's gaps. Not a benchmark; no browser, no timing.
import { describe, expect, it } from 'vitest';
import type { RunRecord, StepRecord } from '../testing/harness/driver';
import { firstTokenStep, sendToFirstTokenMs } from '../src/protocol/metrics';
import { joinLatency, longestGapAfter, timesToFirstToken } from './metrics';

type Row = StepRecord['rows'][number];

function row(sessionId: string, kind: Row['kind'], numTokens: number, sampled: boolean): Row {
  return { sessionId, kind, numTokens, position: 0, newTokenIds: sampled ? [65] : [] };
}

let clockMs = 0;
function step(rows: Row[], elapsedMs: number): StepRecord {
  const startedAtMs = clockMs;
  clockMs += elapsedMs + 1; // a 1 ms yield between steps
  return { stepIndex: 0, startedAtMs, elapsedMs, mode: 'batched', numTokens: rows.reduce((n, r) => n + r.numTokens, 0), queueDepth: 0, numRunning: rows.length, kvBlocksUsed: 0, receivedAtMs: clockMs, rows };
}

function turn(sessionId: string, promptTokens: number, sentAtMs: number): RunRecord['turns'][number] {
  return {
    sessionId,
    sentAtMs,
    sentAfterSteps: 0,
    result: { sessionId, requestId: `${sessionId}-r`, promptTokenIds: new Array<number>(promptTokens).fill(1), outputTokenIds: [], text: '', finishReason: 'length' },
  };
}

describe('join latency', () => {
  it('measures the decoders’ longest gap while the joiner’s chunks run, and its first token', () => {
    clockMs = 1000;
    const steps = [
      step([row('a', 'decode', 1, true), row('b', 'decode', 1, true)], 10),
      step([row('a', 'decode', 1, true), row('b', 'decode', 1, true)], 12),
      step([row('a', 'decode', 1, true), row('b', 'decode', 1, true), row('j', 'prefill', 510, false)], 300),
      step([row('a', 'decode', 1, true), row('b', 'decode', 1, true), row('j', 'prefill', 200, true)], 150),
      step([row('a', 'decode', 1, true), row('b', 'decode', 1, true), row('j', 'decode', 1, true)], 11),
    ];
    const run: RunRecord = {
      mode: 'batched',
      turns: [turn('a', 50, 900), turn('b', 50, 900), turn('j', 710, 1010)],
      steps,
      wallMs: 0,
    };
    const join = joinLatency(run);
    expect(join.joinPromptTokens).toBe(710);
    expect(join.joinSteps).toBe(2);
    expect(join.maxChunkTokens).toBe(510);
    expect(join.longestJoinStepMs).toBe(300);
    // the gap ending at the 300 ms step is that step plus the 1 ms yield before it
    expect(join.maxGapDuringJoinMs).toBe(301);
    expect(join.medianGapBeforeJoinMs).toBe(13);
    expect(join.timeToFirstTokenMs).toBe(steps[3]!.receivedAtMs - 1010);
    expect(timesToFirstToken(run)).toEqual([steps[0]!.receivedAtMs - 900, steps[0]!.receivedAtMs - 900, steps[3]!.receivedAtMs - 1010]);
    // the same figure the page shows: the metrics module's send-to-first-token over the step records
    expect(timesToFirstToken(run)).toEqual(run.turns.map((t) => sendToFirstTokenMs(t.sentAtMs, firstTokenStep(steps, t.sessionId)!.receivedAtMs)));
    // the control's longest gap: over gaps ending after step 2 only (the 300 ms step's, not the 12 ms one's)
    expect(longestGapAfter(run, 2)).toBe(301);
    expect(longestGapAfter({ ...run, steps: steps.slice(0, 2) }, 0)).toBe(13);
    expect(longestGapAfter(run, 5)).toBeNaN();
  });
});
