// Tokens-per-second figures for the UI, derived from StepEvents: per step, per run, over time.
// Pure: no clocks, no stores, no rendering. Tokens = rows' newTokenIds; tok/s counts decode rows only.
import type { StepEvent } from '../../protocol/events';

export interface StepTokenCounts {
  /** Tokens sampled by decode rows (the first token of a turn comes from a prefill row). */
  numDecodeTokens: number;
  /** Tokens sampled by any row. */
  numSampledTokens: number;
  /** Decode tokens per session id. */
  decodeBySession: Map<string, number>;
}

export function stepEndMs(event: StepEvent): number {
  return event.startedAtMs + event.elapsedMs;
}

export function countStepTokens(event: StepEvent): StepTokenCounts {
  let numDecodeTokens = 0;
  let numSampledTokens = 0;
  const decodeBySession = new Map<string, number>();
  for (const row of event.rows) {
    const n = row.newTokenIds.length;
    numSampledTokens += n;
    if (row.kind !== 'decode' || n === 0) continue;
    numDecodeTokens += n;
    decodeBySession.set(row.sessionId, (decodeBySession.get(row.sessionId) ?? 0) + n);
  }
  return { numDecodeTokens, numSampledTokens, decodeBySession };
}

export interface DecodeRate {
  numDecodeTokens: number;
  numSteps: number;
  /** From the first counted step's start to the last one's end (gaps between steps included). */
  elapsedMs: number;
  tokensPerSec: number;
}

/**
 * Aggregate decode tok/s over the steps in which the given sessions (all sessions when omitted)
 * rode: their decode tokens over the wall span of those steps.
 */
export function decodeRate(events: readonly StepEvent[], sessionIds?: ReadonlySet<string>): DecodeRate {
  let numDecodeTokens = 0;
  let numSteps = 0;
  let firstStartMs = Infinity;
  let lastEndMs = -Infinity;
  for (const event of events) {
    const rows = sessionIds ? event.rows.filter((row) => sessionIds.has(row.sessionId)) : event.rows;
    if (rows.length === 0) continue;
    numSteps++;
    firstStartMs = Math.min(firstStartMs, event.startedAtMs);
    lastEndMs = Math.max(lastEndMs, stepEndMs(event));
    for (const row of rows) if (row.kind === 'decode') numDecodeTokens += row.newTokenIds.length;
  }
  const elapsedMs = numSteps > 0 ? lastEndMs - firstStartMs : 0;
  return { numDecodeTokens, numSteps, elapsedMs, tokensPerSec: elapsedMs > 0 ? (numDecodeTokens * 1000) / elapsedMs : 0 };
}

export interface ThroughputSeries {
  /** Seconds since originMs, one point per step end (plus a break point before each idle gap). */
  x: number[];
  /** Aggregate decode tok/s over the trailing window; null at breaks. */
  aggregate: (number | null)[];
  /** Per session id, same length as x. */
  bySession: Map<string, (number | null)[]>;
}

/**
 * Decode tok/s over a trailing window, evaluated at each step's end. A pause longer than the
 * window starts a new segment (a null point breaks the line), and a segment's first window is
 * only as long as the segment so far, so a fresh burst is not under-reported.
 */
export function throughputSeries(events: readonly StepEvent[], originMs: number, windowMs: number, sessionIds: readonly string[]): ThroughputSeries {
  const x: number[] = [];
  const aggregate: (number | null)[] = [];
  const bySession = new Map<string, (number | null)[]>(sessionIds.map((id) => [id, []]));
  const counts = events.map(countStepTokens);
  let segmentStartMs = -Infinity;
  let windowFirst = 0;
  let previousEndMs = -Infinity;
  const pushPoint = (tSec: number, total: number | null, perSession: (id: string) => number | null) => {
    x.push(tSec);
    aggregate.push(total);
    for (const [id, values] of bySession) values.push(perSession(id));
  };
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    const endMs = stepEndMs(event);
    if (event.startedAtMs - previousEndMs > windowMs) {
      if (i > 0) pushPoint((previousEndMs - originMs) / 1000 + 1e-3, null, () => null);
      segmentStartMs = event.startedAtMs;
      windowFirst = i;
    }
    previousEndMs = endMs;
    while (windowFirst < i && stepEndMs(events[windowFirst]) <= endMs - windowMs) windowFirst++;
    const spanMs = Math.min(windowMs, endMs - segmentStartMs);
    if (spanMs <= 0) {
      pushPoint((endMs - originMs) / 1000, null, () => null);
      continue;
    }
    let total = 0;
    const perSession = new Map<string, number>();
    for (let j = windowFirst; j <= i; j++) {
      total += counts[j].numDecodeTokens;
      for (const [id, n] of counts[j].decodeBySession) perSession.set(id, (perSession.get(id) ?? 0) + n);
    }
    const toRate = (n: number) => (n * 1000) / spanMs;
    pushPoint((endMs - originMs) / 1000, toRate(total), (id) => toRate(perSession.get(id) ?? 0));
  }
  return { x, aggregate, bySession };
}

/** Batched over serialized aggregate decode tok/s; null when the baseline measured nothing. */
export function speedup(batched: DecodeRate, serialized: DecodeRate): number | null {
  return serialized.tokensPerSec > 0 && batched.tokensPerSec > 0 ? batched.tokensPerSec / serialized.tokensPerSec : null;
}
