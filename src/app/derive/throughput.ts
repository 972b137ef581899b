// The throughput chart's series: decode tok/s over a trailing window at each step, per session.
// Pure: no clocks, no stores, no rendering. Run-level figures live in src/protocol/metrics.ts.
import type { StepEvent } from '../../protocol/events';
import { perSec, stepEndMs } from '../../protocol/metrics';

export interface StepTokenCounts {
  /** Tokens sampled by decode rows (the first token of a turn comes from a prefill row). */
  numDecodeTokens: number;
  /** Tokens sampled by any row. */
  numSampledTokens: number;
  /** Decode tokens per session id. */
  decodeBySession: Map<string, number>;
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
    const toRate = (n: number) => perSec(n, spanMs);
    pushPoint((endMs - originMs) / 1000, toRate(total), (id) => toRate(perSession.get(id) ?? 0));
  }
  return { x, aggregate, bySession };
}
