// Builders of StepEvents for the UI's pure tests: plain data shaped like the worker's events.
// Test support only; the app never builds StepEvents itself.
import type { StepEvent, StepRowEvent } from '../events';

export function row(sessionId: string, kind: 'prefill' | 'decode', numTokens: number, sampled: number[] = [], newText = '', extra: Partial<StepRowEvent> = {}): StepRowEvent {
  return {
    sessionId,
    requestId: `${sessionId}:1`,
    kind,
    numTokens,
    position: 0,
    newTokenIds: Int32Array.from(sampled),
    newText,
    ...extra,
  };
}

export function step(stepIndex: number, startedAtMs: number, elapsedMs: number, rows: StepRowEvent[], extra: Partial<StepEvent> = {}): StepEvent {
  return {
    stepIndex,
    startedAtMs,
    elapsedMs,
    rows,
    numTokens: rows.reduce((n, r) => n + r.numTokens, 0),
    finished: [],
    kvBlocksUsed: 1,
    kvBlocksFree: 9,
    kvBlocksShared: 0,
    kvBlocksCached: 0,
    kvBlocksTotal: 10,
    kvGroups: [{ window: null, used: 1, total: 10 }],
    queueDepth: 0,
    waiting: [],
    numRunning: rows.length,
    mode: 'batched',
    ...extra,
  };
}
