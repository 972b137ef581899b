// Benchmark figures that need a run's turns: time to first token per turn and the gaps decoding
// sessions see while a long prompt joins. Built on src/protocol/metrics.ts; no browser.
import { firstTokenStep, interTokenGaps, median, sendToFirstTokenMs, tokenEndTimes } from '../src/protocol/metrics';
import type { RunRecord } from '../testing/harness/driver';

/** Send-to-first-token per turn on the page clock (send() call to the step event's arrival). */
export function timesToFirstToken(run: RunRecord): number[] {
  return run.turns.flatMap((turn) => {
    const ttftMs = sendToFirstTokenMs(turn.sentAtMs, firstTokenStep(run.steps, turn.sessionId)?.receivedAtMs);
    return ttftMs === undefined ? [] : [ttftMs];
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
  /**
   * The control: the same decoders run again without the joiner, their longest gap after the
   * steps the joiner waited for. What the machine's own noise does to the longest gap; absent in
   * reports made before it was measured.
   */
  maxGapWithoutJoinMs?: number;
}

/** Longest gap between consecutive tokens of any turn's session, over gaps ending after the run's first `afterSteps` steps. */
export function longestGapAfter(run: RunRecord, afterSteps: number): number {
  const from = run.steps[afterSteps];
  if (!from) return Number.NaN;
  let longest = Number.NaN;
  for (const turn of run.turns) {
    for (const { endMs, gapMs } of interTokenGaps(tokenEndTimes(run.steps, turn.sessionId))) {
      if (endMs > from.startedAtMs && !(gapMs <= longest)) longest = gapMs;
    }
  }
  return longest;
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
    for (const { endMs, gapMs } of interTokenGaps(tokenEndTimes(run.steps, sessionId))) {
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
