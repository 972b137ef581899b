// Event data the worker sends the UI: one StepEvent per step, session snapshots and stats.
// Types only, defined beside the engine that produces them (the engine may not import protocol).
import type { FinishedEvent as EngineFinishedEvent, StepEvent as EngineStepEvent } from '../engine/events';
import type { MODEL_CHANGED } from './load-errors';
import type { ServerSample } from './server';

/**
 * One engine step, or one sampling interval of a server backend (src/remote), which has no steps
 * the page can see: then `server` is set, rows hold what each session's stream delivered in the
 * interval (their newTokenIds are -1 where the server sends text, not ids), and the KV fields are 0.
 */
export interface StepEvent extends Omit<EngineStepEvent, 'finished'> {
  finished: FinishedEvent[];
  server?: ServerSample;
}

/** A request that ended, as the engine says, plus `code` where the host ended it: 'model_changed' (a load replaced its model). */
export interface FinishedEvent extends EngineFinishedEvent {
  code?: typeof MODEL_CHANGED;
}

export type {
  EngineMode,
  FinishReason,
  SessionSnapshot,
  SessionState,
  SessionStats,
  StepBudgetEvent,
  StepRowEvent,
  TokenLogprob,
  TokenLogprobAlternative,
  WaitReason,
  WaitingEvent,
} from '../engine/events';

export type { TurnResult } from '../engine/sessions';
