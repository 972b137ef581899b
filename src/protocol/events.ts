// Event data the worker sends the UI: one StepEvent per step, session snapshots and stats.
// Types only, defined beside the engine that produces them (the engine may not import protocol).
import type { SessionOptions as ApiSessionOptions } from './api';
import type { SessionOptions as EngineSessionOptions } from '../engine/sessions';

export type {
  EngineMode,
  FinishReason,
  FinishedEvent,
  SessionSnapshot,
  SessionState,
  SessionStats,
  StepBudgetEvent,
  StepEvent,
  StepRowEvent,
  WaitReason,
  WaitingEvent,
} from '../engine/events';

/** Compiles only while the API's session options mean the same to the engine. */
type Assignable<From extends To, To> = From;
export type ApiSessionOptionsFitEngine = Assignable<ApiSessionOptions, EngineSessionOptions>;

export type { TurnResult } from '../engine/sessions';
