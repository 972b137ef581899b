// Tests for the one metrics module: decode-only steps and their rate, wall rate, speed-up and
// median, TTFT from the steps and from a send, a session's decode rate since its first token, on
// hand-built steps: plain records (as the benchmark keeps) and StepEvents.
import { describe, expect, it } from 'vitest';
import { row, step } from './testing/step-fixtures';
import {
  decodeRateSinceFirstToken,
  decodeThroughput,
  firstTokenStep,
  interTokenGaps,
  meanCohortSize,
  median,
  prefillThroughput,
  sendToFirstTokenMs,
  speculationFigures,
  speedup,
  stepEndMs,
  timeToFirstTokenMs,
  tokenEndTimes,
  wallDecodeRate,
  type MeasuredRow,
  type MeasuredStep,
} from './metrics';

type Row = MeasuredRow & { position: number };

function rec(sessionId: string, kind: Row['kind'], numTokens: number, sampled: boolean): Row {
  return { sessionId, kind, numTokens, position: 0, newTokenIds: sampled ? [65] : [] };
}

let clockMs = 0;
function recStep(rows: Row[], elapsedMs: number): MeasuredStep & { receivedAtMs: number } {
  const startedAtMs = clockMs;
  clockMs += elapsedMs + 1; // a 1 ms yield between steps
  return { startedAtMs, elapsedMs, receivedAtMs: clockMs, rows };
}

describe('decodeThroughput', () => {
  it('counts only steps made entirely of decode rows, one forward pass each', () => {
    clockMs = 0;
    const steps = [
      recStep([rec('a', 'prefill', 40, true)], 100),
      recStep([rec('a', 'decode', 1, true), rec('b', 'prefill', 40, true)], 100), // mixed: left out
      recStep([rec('a', 'decode', 1, true), rec('b', 'decode', 1, true)], 10),
      recStep([rec('a', 'decode', 1, true), rec('b', 'decode', 1, true)], 10),
      recStep([rec('b', 'decode', 1, true)], 5),
    ];
    const t = decodeThroughput(steps);
    expect(t.decodeTokens).toBe(5);
    expect(t.forwardPasses).toBe(3);
    expect(t.decodeMs).toBe(25);
    expect(t.tokensPerSec).toBeCloseTo(200);
    expect(t.decodeRowsInMixedSteps).toBe(1);
    expect(t.meanRowsPerStep).toBeCloseTo(5 / 3);
    expect(t.wallSpanMs).toBe(steps[4]!.startedAtMs + 5 - steps[2]!.startedAtMs);
    expect(t.decodeGpuMs).toBeNull(); // these steps carry no GPU times
  });

  it('sums the counted steps\' GPU time when every one has it', () => {
    const steps = [recStep([rec('a', 'decode', 1, true)], 10), recStep([rec('a', 'decode', 1, true)], 12)];
    steps[0]!.gpuTimeMs = 7;
    expect(decodeThroughput(steps).decodeGpuMs).toBeNull();
    steps[1]!.gpuTimeMs = 8;
    expect(decodeThroughput(steps).decodeGpuMs).toBe(15);
  });

  it('gives zero, not NaN, when nothing decoded', () => {
    expect(decodeThroughput([recStep([rec('a', 'prefill', 3, true)], 4)]).tokensPerSec).toBe(0);
  });

  it('restricts to the given sessions: a step counts when their rows in it are all decode rows', () => {
    clockMs = 0;
    const steps = [recStep([rec('a', 'decode', 1, true), rec('x', 'prefill', 30, false)], 20), recStep([rec('a', 'decode', 1, true)], 10)];
    expect(decodeThroughput(steps).decodeTokens).toBe(1);
    const onlyA = decodeThroughput(steps, new Set(['a']));
    expect(onlyA.decodeTokens).toBe(2);
    expect(onlyA.decodeMs).toBe(30);
  });
});

describe('wallDecodeRate', () => {
  const events = [
    step(0, 0, 100, [row('a', 'prefill', 30, [1]), row('b', 'prefill', 30, [2])]),
    step(1, 100, 50, [row('a', 'decode', 1, [3]), row('b', 'decode', 1, [4])]),
    step(2, 150, 50, [row('a', 'decode', 1, [5])]),
    step(3, 300, 100, [row('c', 'decode', 1, [6])]),
  ];

  it('divides decode tokens by the wall span of the counted steps', () => {
    const all = wallDecodeRate(events);
    expect(all.numDecodeTokens).toBe(4);
    expect(all.numSteps).toBe(4);
    expect(all.elapsedMs).toBe(400);
    expect(all.tokensPerSec).toBe(10);
  });

  it('restricts to the given sessions and to the steps they rode in', () => {
    const ab = wallDecodeRate(events, new Set(['a', 'b']));
    expect(ab.numDecodeTokens).toBe(3);
    expect(ab.numSteps).toBe(3);
    expect(ab.elapsedMs).toBe(200);
    expect(ab.tokensPerSec).toBe(15);
  });

  it('is zero, not NaN, without steps', () => {
    expect(wallDecodeRate([], new Set(['x']))).toEqual({ numDecodeTokens: 0, numSteps: 0, elapsedMs: 0, tokensPerSec: 0 });
    expect(wallDecodeRate(events, new Set(['nobody'])).tokensPerSec).toBe(0);
  });

  it('gives the batched/serialized ratio, or null without a baseline', () => {
    const fast = { numDecodeTokens: 80, numSteps: 10, elapsedMs: 1000, tokensPerSec: 80 };
    const slow = { numDecodeTokens: 80, numSteps: 80, elapsedMs: 4000, tokensPerSec: 20 };
    expect(speedup(fast, slow)).toBe(4);
    expect(speedup(fast, { ...slow, tokensPerSec: 0 })).toBeNull();
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe('one request\'s figures (the library\'s timings)', () => {
  // a waits behind b's step, prefills in two chunks beside b, then decodes alone
  const steps = [
    step(0, 0, 10, [row('b', 'prefill', 8, [1])], { waiting: [{ sessionId: 'a', requestId: 'a:1', reason: 'queued' }] }),
    step(1, 11, 20, [row('a', 'prefill', 30), row('b', 'decode', 1, [2])]),
    step(2, 32, 10, [row('a', 'prefill', 10, [3]), row('b', 'decode', 1, [4])]),
    step(3, 43, 2, [row('a', 'decode', 1, [5])]),
    step(4, 46, 2, [row('a', 'decode', 1, [6])]),
  ];
  const a = new Set(['a']);

  it('prefill tok/s: prefill tokens over the steps that carried them', () => {
    expect(prefillThroughput(steps, a)).toEqual({ prefillTokens: 40, prefillMs: 30, tokensPerSec: 40_000 / 30 });
    expect(prefillThroughput(steps, new Set(['nobody'])).tokensPerSec).toBe(0);
  });

  it('TTFT: from the first step that shows the request to the end of its first token\'s step', () => {
    expect(timeToFirstTokenMs(steps, 'a')).toBe(42 - 10); // seen waiting when step 0 ended at 10
    expect(timeToFirstTokenMs(steps, 'b')).toBe(10);
    expect(timeToFirstTokenMs(steps.slice(0, 2), 'a')).toBeUndefined();
  });

  it('TTFT from a send: to the first step that gave the session a token, on the sender\'s clock', () => {
    expect(firstTokenStep(steps, 'a')).toBe(steps[2]);
    expect(firstTokenStep(steps, 'nobody')).toBeUndefined();
    // a host that sent at 4 on the engine clock and saw the token when step 2 ended (42)
    expect(sendToFirstTokenMs(4, stepEndMs(firstTokenStep(steps, 'a')!))).toBe(38);
    expect(sendToFirstTokenMs(4, firstTokenStep(steps, 'nobody')?.startedAtMs)).toBeUndefined();
    // the steps show a request no earlier than its send: the step-clock TTFT is never longer
    expect(timeToFirstTokenMs(steps, 'a')).toBeLessThanOrEqual(sendToFirstTokenMs(4, 42)!);
  });

  it("a session's decode rate since its first token: 1000 / its mean inter-token gap", () => {
    const ends = tokenEndTimes(steps, 'a'); // 42, 45, 48
    const gaps = interTokenGaps(ends).map((g) => g.gapMs);
    const rate = decodeRateSinceFirstToken(2, ends[0]!, ends.at(-1)!);
    expect(rate).toBe(2000 / 6);
    expect(rate).toBeCloseTo(1000 / (gaps.reduce((x, y) => x + y, 0) / gaps.length), 9);
    expect(decodeRateSinceFirstToken(0, 42, 48)).toBeUndefined();
    expect(decodeRateSinceFirstToken(1, 42, 42)).toBeUndefined();
  });

  it('mean cohort size over the steps the request rode in', () => {
    expect(meanCohortSize(steps, a)).toBe((2 + 2 + 1 + 1) / 4);
    expect(meanCohortSize(steps, new Set(['nobody']))).toBe(0);
  });
});

describe('speculationFigures and verify rows in decode tok/s', () => {
  /** A decode row that fed 1 + drafted tokens and made accepted + 1. */
  const verify = (sessionId: string, drafted: number, acceptedCount: number): Row => ({ sessionId, kind: 'decode', numTokens: 1 + drafted, position: 0, newTokenIds: new Array<number>(acceptedCount + 1).fill(65), numDrafted: drafted, numAccepted: acceptedCount });

  it('counts tokens per decode row-step and the share of drafts accepted', () => {
    clockMs = 0;
    const steps = [
      recStep([rec('a', 'prefill', 40, true)], 100), // prefill rows are not row-steps here
      recStep([verify('a', 4, 4), rec('b', 'decode', 1, true)], 10), // a: 5 tokens, b: 1
      recStep([verify('a', 4, 1), verify('b', 2, 0)], 10), // a: 2, b: 1
    ];
    const all = speculationFigures(steps);
    expect(all).toEqual({ decodeRowSteps: 4, decodeTokens: 9, tokensPerRowStep: 9 / 4, numDrafted: 10, numAccepted: 5, acceptanceRate: 0.5 });
    const b = speculationFigures(steps, new Set(['b']));
    expect(b).toMatchObject({ decodeRowSteps: 2, tokensPerRowStep: 1, numDrafted: 2, acceptanceRate: 0 });
    expect(speculationFigures(steps.slice(0, 1))).toMatchObject({ decodeRowSteps: 0, tokensPerRowStep: 0, acceptanceRate: null });
    // decode tok/s counts what the rows made, not the drafts they fed; rows stay rows
    const t = decodeThroughput(steps);
    expect(t.decodeTokens).toBe(9);
    expect(t.meanRowsPerStep).toBe(2);
    expect(t.tokensPerSec).toBeCloseTo(450);
  });
});
