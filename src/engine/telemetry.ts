// Telemetry: tokens-per-second figures derived from StepEvents, per session and for all together.
// Pure functions over event lists; no clocks, no state, no rendering.
import type { StepEvent } from './events';

export interface Throughput {
  /** Tokens sampled (generated) in the span. */
  numSampledTokens: number;
  /** Of those, tokens sampled by decode rows (the first token of a turn comes from a prefill row). */
  numDecodeTokens: number;
  /** Tokens fed (prefill + decode) in the span. */
  numFedTokens: number;
  numSteps: number;
  /** From the first counted step's start to the last one's end. */
  elapsedMs: number;
  sampledTokensPerSec: number;
  decodeTokensPerSec: number;
}

const EMPTY: Throughput = {
  numSampledTokens: 0,
  numDecodeTokens: 0,
  numFedTokens: 0,
  numSteps: 0,
  elapsedMs: 0,
  sampledTokensPerSec: 0,
  decodeTokensPerSec: 0,
};

function rate(numTokens: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (numTokens * 1000) / elapsedMs : 0;
}

/** Throughput of the steps a session rode in (its time span, its tokens). */
export function sessionThroughput(events: readonly StepEvent[], sessionId: string): Throughput {
  return throughputOf(events, (row) => row.sessionId === sessionId);
}

/** Throughput of all sessions together over the given steps. */
export function aggregateThroughput(events: readonly StepEvent[]): Throughput {
  return throughputOf(events, () => true);
}

/** Aggregate throughput of the steps that started within the last `windowMs` of the list. */
export function recentThroughput(events: readonly StepEvent[], windowMs: number): Throughput {
  if (events.length === 0) return EMPTY;
  const last = events[events.length - 1];
  const since = last.startedAtMs + last.elapsedMs - windowMs;
  let first = events.length;
  while (first > 0 && events[first - 1].startedAtMs >= since) first--;
  return aggregateThroughput(events.slice(first));
}

/** Per-session throughput for every session that appears in the events. */
export function throughputBySession(events: readonly StepEvent[]): Map<string, Throughput> {
  const ids = new Set<string>();
  for (const event of events) for (const row of event.rows) ids.add(row.sessionId);
  return new Map([...ids].map((id) => [id, sessionThroughput(events, id)]));
}

function throughputOf(events: readonly StepEvent[], counts: (row: StepEvent['rows'][number]) => boolean): Throughput {
  let numSampledTokens = 0;
  let numDecodeTokens = 0;
  let numFedTokens = 0;
  let numSteps = 0;
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const event of events) {
    let rode = false;
    for (const row of event.rows) {
      if (!counts(row)) continue;
      rode = true;
      numFedTokens += row.numTokens;
      numSampledTokens += row.newTokenIds.length;
      if (row.kind === 'decode') numDecodeTokens += row.newTokenIds.length;
    }
    if (!rode) continue;
    numSteps++;
    startMs = Math.min(startMs, event.startedAtMs);
    endMs = Math.max(endMs, event.startedAtMs + event.elapsedMs);
  }
  if (numSteps === 0) return EMPTY;
  const elapsedMs = endMs - startMs;
  return {
    numSampledTokens,
    numDecodeTokens,
    numFedTokens,
    numSteps,
    elapsedMs,
    sampledTokensPerSec: rate(numSampledTokens, elapsedMs),
    decodeTokensPerSec: rate(numDecodeTokens, elapsedMs),
  };
}
