// The one definition of every speed figure, over StepEvents or their plain-data copies: decode and
// prefill tok/s, wall tok/s, TTFT (from the steps and from a send), a session's decode tok/s since its
// first token, token times and gaps, cohort size, the batched/serialized speed-up, and what
// speculative decoding did (tokens per row-step, draft acceptance).
// Pure functions; the page, the library's usage, the benchmark and the README all read these.

/** The part of a step row the figures read (StepRowEvent, or a copy with number arrays). */
export interface MeasuredRow {
  sessionId: string;
  kind: 'prefill' | 'decode';
  numTokens: number;
  newTokenIds: ArrayLike<number>;
  /** Drafted tokens the row fed for verification, counted in numTokens (StepRowEvent.numDrafted). */
  numDrafted?: number;
  /** Of those, the ones accepted (StepRowEvent.numAccepted). */
  numAccepted?: number;
}

/** The part of a step the figures read: the engine's own clock, never the page's. */
export interface MeasuredStep {
  startedAtMs: number;
  elapsedMs: number;
  gpuTimeMs?: number;
  rows: readonly MeasuredRow[];
  /** Requests waiting after the step (StepEvent.waiting); only timeToFirstTokenMs reads it. */
  waiting?: readonly { sessionId: string }[];
}

export function stepEndMs(step: MeasuredStep): number {
  return step.startedAtMs + step.elapsedMs;
}

function rowsOf(step: MeasuredStep, sessionIds?: ReadonlySet<string>): readonly MeasuredRow[] {
  return sessionIds ? step.rows.filter((row) => sessionIds.has(row.sessionId)) : step.rows;
}

/** A step made only of decode rows: one forward pass that fed one token per row. */
export function isDecodeOnlyStep(step: MeasuredStep, sessionIds?: ReadonlySet<string>): boolean {
  const rows = rowsOf(step, sessionIds);
  return rows.length > 0 && rows.every((row) => row.kind === 'decode');
}

export interface DecodeThroughput {
  /** Tokens the decode rows fed in the counted steps (one per row in an engine step; a server sample's row may carry several). */
  decodeTokens: number;
  /** Counted steps: those whose rows are all decode rows; each is one forward pass. */
  forwardPasses: number;
  /** Sum of the counted steps' elapsedMs (the engine's own step wall time). */
  decodeMs: number;
  /** Sum of their GPU pass times (timestamp queries); null where the device has none. */
  decodeGpuMs: number | null;
  /** Decode tok/s: decodeTokens over decodeMs. */
  tokensPerSec: number;
  /** From the first counted step's start to the last one's end. */
  wallSpanMs: number;
  /** Decode rows that rode in steps with a prefill chunk; left out of the rate. */
  decodeRowsInMixedSteps: number;
  meanRowsPerStep: number;
}

/**
 * Decode tok/s: decode rows over the summed elapsedMs of the steps that carry only decode rows
 * (of the given sessions, when given). Each counted token is the one forward pass that fed it on
 * either path; prefill forwards (which sample each request's first token) count on neither.
 */
export function decodeThroughput(steps: readonly MeasuredStep[], sessionIds?: ReadonlySet<string>): DecodeThroughput {
  let decodeTokens = 0;
  let forwardPasses = 0;
  let decodeMs = 0;
  let gpuMs = 0;
  let timed = true;
  let decodeRowsInMixedSteps = 0;
  let rowSlots = 0;
  let firstStartMs = Infinity;
  let lastEndMs = -Infinity;
  for (const step of steps) {
    const rows = rowsOf(step, sessionIds);
    if (!isDecodeOnlyStep(step, sessionIds)) {
      decodeRowsInMixedSteps += rows.filter((row) => row.kind === 'decode').length;
      continue;
    }
    for (const row of rows) {
      decodeTokens += decodeRowTokens(row);
      // a verify row is one row however many tokens it made (a server sample's row counts as before)
      rowSlots += row.numDrafted !== undefined ? 1 : row.numTokens;
    }
    forwardPasses++;
    decodeMs += step.elapsedMs;
    if (step.gpuTimeMs === undefined) timed = false;
    else gpuMs += step.gpuTimeMs;
    firstStartMs = Math.min(firstStartMs, step.startedAtMs);
    lastEndMs = Math.max(lastEndMs, stepEndMs(step));
  }
  return {
    decodeTokens,
    forwardPasses,
    decodeMs,
    decodeGpuMs: forwardPasses > 0 && timed ? gpuMs : null,
    tokensPerSec: perSec(decodeTokens, decodeMs),
    wallSpanMs: forwardPasses > 0 ? lastEndMs - firstStartMs : 0,
    decodeRowsInMixedSteps,
    meanRowsPerStep: forwardPasses > 0 ? rowSlots / forwardPasses : 0,
  };
}

/**
 * Tokens a decode row made: an engine row feeds one token, a server sample's row what its stream
 * delivered (numTokens either way); a verify row feeds its drafts too, and makes what it accepted
 * plus the one sampled past them (its newTokenIds), which is what decode tok/s must count.
 */
export function decodeRowTokens(row: MeasuredRow): number {
  return row.numDrafted !== undefined ? row.newTokenIds.length : row.numTokens;
}

export interface WallDecodeRate {
  numDecodeTokens: number;
  numSteps: number;
  /** From the first counted step's start to the last one's end (gaps between steps included). */
  elapsedMs: number;
  tokensPerSec: number;
}

/**
 * Wall tok/s: decode tokens sampled by the given sessions (all when omitted) over the wall span
 * of the steps they rode in, prefill steps and the gaps between steps included.
 */
export function wallDecodeRate(steps: readonly MeasuredStep[], sessionIds?: ReadonlySet<string>): WallDecodeRate {
  let numDecodeTokens = 0;
  let numSteps = 0;
  let firstStartMs = Infinity;
  let lastEndMs = -Infinity;
  for (const step of steps) {
    const rows = rowsOf(step, sessionIds);
    if (rows.length === 0) continue;
    numSteps++;
    firstStartMs = Math.min(firstStartMs, step.startedAtMs);
    lastEndMs = Math.max(lastEndMs, stepEndMs(step));
    for (const row of rows) if (row.kind === 'decode') numDecodeTokens += row.newTokenIds.length;
  }
  const elapsedMs = numSteps > 0 ? lastEndMs - firstStartMs : 0;
  return { numDecodeTokens, numSteps, elapsedMs, tokensPerSec: perSec(numDecodeTokens, elapsedMs) };
}

/** Tokens per second, 0 (not NaN or Infinity) over an empty span. */
export function perSec(numTokens: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (numTokens * 1000) / elapsedMs : 0;
}

/** Batched over serialized decode tok/s; null when either side measured nothing. */
export function speedup(batched: { tokensPerSec: number }, serialized: { tokensPerSec: number }): number | null {
  return serialized.tokensPerSec > 0 && batched.tokensPerSec > 0 ? batched.tokensPerSec / serialized.tokensPerSec : null;
}

export interface PrefillThroughput {
  /** Tokens fed by prefill rows (prompt chunks, recomputes after preemption). */
  prefillTokens: number;
  /** Sum of the elapsedMs of the steps that carried them (shared with any decode rows there). */
  prefillMs: number;
  tokensPerSec: number;
}

/** Prefill tok/s: tokens fed by the given sessions' prefill rows over the steps that carried them. */
export function prefillThroughput(steps: readonly MeasuredStep[], sessionIds?: ReadonlySet<string>): PrefillThroughput {
  let prefillTokens = 0;
  let prefillMs = 0;
  for (const step of steps) {
    const rows = rowsOf(step, sessionIds).filter((row) => row.kind === 'prefill');
    if (rows.length === 0) continue;
    for (const row of rows) prefillTokens += row.numTokens;
    prefillMs += step.elapsedMs;
  }
  return { prefillTokens, prefillMs, tokensPerSec: perSec(prefillTokens, prefillMs) };
}

/** Whether one of the step's rows sampled a token for sessionId. */
export function gaveToken(step: MeasuredStep, sessionId: string): boolean {
  return step.rows.some((row) => row.sessionId === sessionId && row.newTokenIds.length > 0);
}

/** The first of the steps that gave sessionId a token (the one that carries its first token). */
export function firstTokenStep<S extends MeasuredStep>(steps: readonly S[], sessionId: string): S | undefined {
  return steps.find((step) => gaveToken(step, sessionId));
}

/**
 * Time to first token, as whoever sent the turn saw it: from its send() to the moment it saw the
 * turn's first sampled token, both read on its own clock. The page and the bench: performance.now()
 * at send() and at the arrival of the step event that carries the token (firstTokenStep); a host:
 * its clock at send() and when the step or the server's stream delivered it. Undefined before a
 * token. timeToFirstTokenMs is the same span read off the steps' engine clock alone.
 */
export function sendToFirstTokenMs(sentAtMs: number, firstTokenSeenAtMs: number | undefined): number | undefined {
  return firstTokenSeenAtMs === undefined ? undefined : firstTokenSeenAtMs - sentAtMs;
}

/**
 * Time to first token on the engine clock: from when the steps first show the session (the end
 * of a step that lists it waiting, or the start of the first step it rides in) to the end of the
 * step that sampled its first token. Short of the send-to-token time by at most one step, since
 * the request arrived before the first step that shows it ended. Undefined before a token.
 */
export function timeToFirstTokenMs(steps: readonly MeasuredStep[], sessionId: string): number | undefined {
  let seenMs = Infinity;
  for (const step of steps) {
    if (step.waiting?.some((w) => w.sessionId === sessionId)) seenMs = Math.min(seenMs, stepEndMs(step));
    if (!step.rows.some((row) => row.sessionId === sessionId)) continue;
    seenMs = Math.min(seenMs, step.startedAtMs);
    if (gaveToken(step, sessionId)) return stepEndMs(step) - seenMs;
  }
  return undefined;
}

/**
 * One session's decode tok/s since its first token (a chat pane's figure): its decode tokens over
 * the engine-clock span from the end of the step that sampled its first token to the end of the
 * step that sampled its latest (tokenEndTimes' first and last), so 1000 / the mean inter-token gap
 * when every decode step gives it one token. Prefill and the wait before it are left out.
 * Undefined until there is a decode token and the span is positive.
 */
export function decodeRateSinceFirstToken(numDecodeTokens: number, firstTokenEndMs: number, lastTokenEndMs: number): number | undefined {
  const spanMs = lastTokenEndMs - firstTokenEndMs;
  return numDecodeTokens > 0 && spanMs > 0 ? perSec(numDecodeTokens, spanMs) : undefined;
}

/** Mean rows per step over the steps in which any of the given sessions rode (0 when none). */
export function meanCohortSize(steps: readonly MeasuredStep[], sessionIds: ReadonlySet<string>): number {
  let numSteps = 0;
  let numRows = 0;
  for (const step of steps) {
    if (!step.rows.some((row) => sessionIds.has(row.sessionId))) continue;
    numSteps++;
    numRows += step.rows.length;
  }
  return numSteps > 0 ? numRows / numSteps : 0;
}

export interface SpeculationFigures {
  /** Decode rows over the steps (a row-step: one request in one forward pass), verify rows included. */
  decodeRowSteps: number;
  /** Tokens those rows made (decodeRowTokens). */
  decodeTokens: number;
  /** decodeTokens / decodeRowSteps: 1 for plain decode, up to 1 + the draft length; 0 without decode rows. */
  tokensPerRowStep: number;
  /** Drafted tokens fed for verification, and of those the ones accepted. */
  numDrafted: number;
  numAccepted: number;
  /** numAccepted / numDrafted; null when nothing was drafted. */
  acceptanceRate: number | null;
}

/**
 * What speculative decoding did for the given sessions (all when omitted): tokens each decode row
 * made per step it rode in, and the share of drafted tokens accepted. Prefill rows are left out:
 * they feed prompt tokens and make at most one.
 */
export function speculationFigures(steps: readonly MeasuredStep[], sessionIds?: ReadonlySet<string>): SpeculationFigures {
  let decodeRowSteps = 0;
  let decodeTokens = 0;
  let numDrafted = 0;
  let numAccepted = 0;
  for (const step of steps) {
    for (const row of rowsOf(step, sessionIds)) {
      if (row.kind !== 'decode') continue;
      decodeRowSteps++;
      decodeTokens += decodeRowTokens(row);
      numDrafted += row.numDrafted ?? 0;
      numAccepted += row.numAccepted ?? 0;
    }
  }
  return {
    decodeRowSteps,
    decodeTokens,
    tokensPerRowStep: decodeRowSteps > 0 ? decodeTokens / decodeRowSteps : 0,
    numDrafted,
    numAccepted,
    acceptanceRate: numDrafted > 0 ? numAccepted / numDrafted : null,
  };
}

/** End time (engine clock) of each step that gave `sessionId` a token. */
export function tokenEndTimes(steps: readonly MeasuredStep[], sessionId: string): number[] {
  return steps.filter((s) => gaveToken(s, sessionId)).map(stepEndMs);
}

/** Inter-token gaps: each token's end time and the time since the previous token's. */
export function interTokenGaps(times: readonly number[]): Array<{ endMs: number; gapMs: number }> {
  return times.slice(1).map((t, i) => ({ endMs: t, gapMs: t - times[i]! }));
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
