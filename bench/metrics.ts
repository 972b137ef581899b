// Benchmark arithmetic over recorded steps: decode throughput, time to first token and the gaps
// decoding sessions see while a long prompt joins. Pure functions of the records; no browser.
import type { RunRecord, StepRecord } from '../testing/harness/driver';

export interface DecodeThroughput {
  /** Decode rows (one fed token each) in the counted steps. */
  decodeTokens: number;
  /** Counted steps: those whose rows are all decode rows; each is one forward pass. */
  forwardPasses: number;
  /** Sum of the counted steps' elapsedMs (the engine's own step wall time). */
  decodeMs: number;
  /** Sum of their GPU pass times (timestamp queries); null where the device has none. */
  decodeGpuMs: number | null;
  tokensPerSec: number;
  /** Page-independent wall span from the first counted step's start to the last one's end. */
  wallSpanMs: number;
  /** Decode rows that rode in steps with a prefill chunk; left out of the rate. */
  decodeRowsInMixedSteps: number;
  meanRowsPerStep: number;
}

/** A step is counted only when it carries decode rows and nothing else. */
export function isPureDecodeStep(step: StepRecord): boolean {
  return step.rows.length > 0 && step.rows.every((row) => row.kind === 'decode');
}

/**
 * Aggregate decode tokens/sec: decode rows over the summed elapsedMs of steps that carry only
 * decode rows. Each counted token is the one forward pass that fed it on either path; prefill
 * forwards (which sample each request's first token) count on neither.
 */
export function decodeThroughput(steps: StepRecord[]): DecodeThroughput {
  const counted = steps.filter(isPureDecodeStep);
  const decodeTokens = counted.reduce((n, s) => n + s.rows.length, 0);
  const decodeMs = counted.reduce((ms, s) => ms + s.elapsedMs, 0);
  const timed = counted.length > 0 && counted.every((s) => s.gpuTimeMs !== undefined);
  const decodeRowsInMixedSteps = steps
    .filter((s) => !isPureDecodeStep(s))
    .reduce((n, s) => n + s.rows.filter((r) => r.kind === 'decode').length, 0);
  const first = counted[0];
  const last = counted[counted.length - 1];
  return {
    decodeTokens,
    forwardPasses: counted.length,
    decodeMs,
    decodeGpuMs: timed ? counted.reduce((ms, s) => ms + s.gpuTimeMs!, 0) : null,
    tokensPerSec: decodeMs > 0 ? (decodeTokens * 1000) / decodeMs : 0,
    wallSpanMs: first && last ? last.startedAtMs + last.elapsedMs - first.startedAtMs : 0,
    decodeRowsInMixedSteps,
    meanRowsPerStep: counted.length > 0 ? decodeTokens / counted.length : 0,
  };
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Send-to-first-token per turn on the page clock (send() call to the step event's arrival). */
export function timesToFirstToken(run: RunRecord): number[] {
  return run.turns.flatMap((turn) => {
    const step = run.steps.find((s) => s.rows.some((r) => r.sessionId === turn.sessionId && r.newTokenIds.length > 0));
    return step ? [step.receivedAtMs - turn.sentAtMs] : [];
  });
}

export interface JoinLatency {
  /** The joining prompt's length and its send-to-first-token time (page clock). */
  joinPromptTokens: number;
  timeToFirstTokenMs: number;
  /** Steps that carried the joining prompt's chunks, and the largest chunk. */
  joinSteps: number;
  maxChunkTokens: number;
  /** Longest gap between consecutive tokens of any decoding session while the prompt joined. */
  maxGapDuringJoinMs: number;
  /** Median gap between those sessions' tokens before the join. */
  medianGapBeforeJoinMs: number;
  /** Longest single step of the join: the gap chunked prefill should stay close to. */
  longestJoinStepMs: number;
}

/** End time (worker clock) of each step that gave `sessionId` a token. */
function tokenTimes(steps: StepRecord[], sessionId: string): number[] {
  return steps
    .filter((s) => s.rows.some((r) => r.sessionId === sessionId && r.newTokenIds.length > 0))
    .map((s) => s.startedAtMs + s.elapsedMs);
}

function gaps(times: number[]): Array<{ endMs: number; gapMs: number }> {
  return times.slice(1).map((t, i) => ({ endMs: t, gapMs: t - times[i]! }));
}

/**
 * How a long prompt joining running decodes affects them: the joiner is the run's last turn,
 * every earlier turn is a decoding session. The join window runs from the first step carrying
 * the joiner's chunk to the step that sampled its first token.
 */
export function joinLatency(run: RunRecord): JoinLatency {
  const joiner = run.turns[run.turns.length - 1]!;
  const decoders = run.turns.slice(0, -1).map((t) => t.sessionId);
  const joinSteps = run.steps.filter((s) => s.rows.some((r) => r.sessionId === joiner.sessionId && r.kind === 'prefill'));
  if (joinSteps.length === 0) throw new Error('the joining prompt never ran');
  const windowStart = joinSteps[0]!.startedAtMs;
  const lastJoin = joinSteps[joinSteps.length - 1]!;
  const windowEnd = lastJoin.startedAtMs + lastJoin.elapsedMs;
  const during: number[] = [];
  const before: number[] = [];
  for (const sessionId of decoders) {
    for (const { endMs, gapMs } of gaps(tokenTimes(run.steps, sessionId))) {
      // a gap belongs to the join when it ends inside the window (its token waited on a join step)
      if (endMs > windowStart && endMs <= windowEnd) during.push(gapMs);
      else if (endMs <= windowStart) before.push(gapMs);
    }
  }
  const ttft = timesToFirstToken({ ...run, turns: [joiner] });
  return {
    joinPromptTokens: joiner.result.promptTokenIds.length,
    timeToFirstTokenMs: ttft[0] ?? Number.NaN,
    joinSteps: joinSteps.length,
    maxChunkTokens: Math.max(...joinSteps.map((s) => s.rows.find((r) => r.sessionId === joiner.sessionId)!.numTokens)),
    maxGapDuringJoinMs: during.length > 0 ? Math.max(...during) : Number.NaN,
    medianGapBeforeJoinMs: median(before),
    longestJoinStepMs: Math.max(...joinSteps.map((s) => s.elapsedMs)),
  };
}
