// The library entry (`import { createEngine } from 'cohort'`): starts or joins the engine worker and
// returns a CohortEngine over it. Browser wiring only; the behaviour lives in engine.ts.
import type { ModelSource } from '../protocol/api';
import { startBrowserEngine, type BrowserEngine, type WorkerOptions } from './browser-engine';
import type { LoadOptions } from './engine';

export { BrowserEngine, type WorkerKind, type WorkerOptions } from './browser-engine';
export { CohortEngine, type LoadOptions } from './engine';
export { AbortError, CohortError, ContextLengthError, EngineError, GpuLostError, InvalidRequestError, ModelNotLoadedError, type ErrorBody } from './errors';
export type * from './types';
export type { EngineNotice, LoadProgress, ModelInfo, ModelSource } from '../protocol/api';
export type { FinishedEvent, StepEvent, StepRowEvent, WaitingEvent } from '../protocol/events';

export interface CreateEngineOptions extends LoadOptions, WorkerOptions {
  /** Load this model before resolving (e.g. `{ kind: 'embedded' }`); none: call engine.load() later. */
  model?: ModelSource;
}

/** Starts or joins the engine worker (see browser-engine.ts for which) and loads `options.model`. */
export async function createEngine(options: CreateEngineOptions = {}): Promise<BrowserEngine> {
  const engine = await startBrowserEngine(options);
  if (options.model) await engine.load(options.model, options);
  return engine;
}
