// Runs a workload of chat turns against EngineApi and records every step it took: the shared
// driver of the browser recall test and the benchmark. No UI, no assertions, no measurements.
import type { EngineApi, SessionOptions } from '../../src/protocol/api';
import type { EngineMode, FinishReason, StepEvent, TurnResult } from '../../src/protocol/events';

/** Plain-data step as Playwright reads it back (typed arrays become number arrays). */
export interface StepRecord {
  stepIndex: number;
  startedAtMs: number;
  elapsedMs: number;
  gpuTimeMs?: number;
  mode: EngineMode;
  numTokens: number;
  /** After the step: requests waiting, requests holding KV, blocks in use. */
  queueDepth: number;
  numRunning: number;
  kvBlocksUsed: number;
  /** Page clock (performance.now) when the event reached the page. */
  receivedAtMs: number;
  rows: Array<{ sessionId: string; kind: 'prefill' | 'decode'; numTokens: number; position: number; newTokenIds: number[]; finishReason?: FinishReason; numDrafted?: number; numAccepted?: number }>;
}

export interface TurnSpec {
  /** One user message (templated by the model's chat template). */
  prompt: string;
  options?: SessionOptions;
  /** Step events to wait for after the previous send before sending this one (0: at once). */
  afterSteps?: number;
}

export interface RunRequest {
  mode: EngineMode;
  turns: TurnSpec[];
}

export interface TurnRecord {
  sessionId: string;
  /** Page clock when send() was called. */
  sentAtMs: number;
  /** Steps this page had seen from the run's start when the turn was sent. */
  sentAfterSteps: number;
  result: TurnResult;
}

export interface RunRecord {
  mode: EngineMode;
  turns: TurnRecord[];
  /** Every step from the first send to the last turn's end, in order. */
  steps: StepRecord[];
  wallMs: number;
}

export function toStepRecord(event: StepEvent, receivedAtMs: number): StepRecord {
  return {
    stepIndex: event.stepIndex,
    startedAtMs: event.startedAtMs,
    elapsedMs: event.elapsedMs,
    ...(event.gpuTimeMs !== undefined ? { gpuTimeMs: event.gpuTimeMs } : {}),
    mode: event.mode,
    numTokens: event.numTokens,
    queueDepth: event.queueDepth,
    numRunning: event.numRunning,
    kvBlocksUsed: event.kvBlocksUsed,
    receivedAtMs,
    rows: event.rows.map((row) => ({
      sessionId: row.sessionId,
      kind: row.kind,
      numTokens: row.numTokens,
      position: row.position,
      newTokenIds: Array.from(row.newTokenIds),
      ...(row.finishReason ? { finishReason: row.finishReason } : {}),
      ...(row.numDrafted !== undefined ? { numDrafted: row.numDrafted, numAccepted: row.numAccepted ?? 0 } : {}),
    })),
  };
}

/** Step events as they arrive, and waits on their count. */
export class StepLog {
  readonly steps: StepRecord[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  push(event: StepEvent): void {
    this.steps.push(toStepRecord(event, performance.now()));
    const ready = this.waiters.filter((w) => this.steps.length >= w.count);
    this.waiters = this.waiters.filter((w) => this.steps.length < w.count);
    for (const w of ready) w.resolve();
  }

  /** Resolves once the log holds at least `count` steps. */
  reach(count: number): Promise<void> {
    if (this.steps.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }
}

/**
 * Opens one session per turn, sends them (staggered by step counts), waits for every turn and
 * closes the sessions. A stagger never waits on an engine gone idle: it also ends when every
 * turn sent so far has finished.
 */
export async function runTurns(api: EngineApi, log: StepLog, request: RunRequest): Promise<RunRecord> {
  await api.setMode(request.mode);
  const sessionIds: string[] = [];
  for (const turn of request.turns) sessionIds.push(await api.createSession(turn.options));
  const firstStep = log.steps.length;
  const startedAtMs = performance.now();
  const pending: Array<Promise<TurnResult>> = [];
  const records: Array<Omit<TurnRecord, 'result'>> = [];
  for (const [i, turn] of request.turns.entries()) {
    const afterSteps = turn.afterSteps ?? 0;
    if (i > 0 && afterSteps > 0) {
      const allDone = Promise.all(pending).then(() => undefined);
      await Promise.race([log.reach(log.steps.length + afterSteps), allDone]);
    }
    const sessionId = sessionIds[i];
    records.push({ sessionId, sentAtMs: performance.now(), sentAfterSteps: log.steps.length - firstStep });
    await api.send(sessionId, turn.prompt);
    pending.push(api.waitForTurn(sessionId));
  }
  const results = await Promise.all(pending);
  // A round trip to the worker: step events posted before it have now reached the page.
  await api.waitForTurn(sessionIds[sessionIds.length - 1]);
  const wallMs = performance.now() - startedAtMs;
  for (const sessionId of sessionIds) await api.closeSession(sessionId);
  return {
    mode: request.mode,
    turns: records.map((record, i) => ({ ...record, result: plainResult(results[i]) })),
    steps: log.steps.slice(firstStep),
    wallMs,
  };
}

function plainResult(result: TurnResult): TurnResult {
  return {
    ...result,
    promptTokenIds: Array.from(result.promptTokenIds),
    outputTokenIds: Array.from(result.outputTokenIds),
  };
}
