// The library entry (`import { createEngine } from 'cohort'`): starts or joins the engine worker, or
// connects to a server backend, and returns a CohortEngine. Wiring only; the behaviour is in engine.ts.
import type { ModelSource } from '../protocol/api';
import { startBrowserEngine, type BrowserEngine, type WorkerOptions } from './browser-engine';
import type { CohortEngine, LoadOptions } from './engine';
import { checkKvOptions, checkSource } from './errors';
import { createServerEngine, type ServerBackend } from './server-engine';

export { BrowserEngine, type WorkerKind, type WorkerOptions } from './browser-engine';
export { CohortEngine, type LoadOptions } from './engine';
export { createServerEngine, type ServerBackend } from './server-engine';
export { ServerError, type ServerErrorCode } from '../remote/server-errors';
export type { ServerInfo, ServerKind, ServerSample, ServerSlot } from '../protocol/server';
export {
  AbortError,
  CohortError,
  ContextLengthError,
  EngineError,
  EngineStartError,
  EngineTerminatedError,
  GpuLostError,
  InvalidRequestError,
  ModelChangedError,
  ModelLoadError,
  ModelNotLoadedError,
  TabExpiredError,
  type ErrorBody,
} from './errors';
export type { ModelLoadErrorCode } from '../protocol/load-errors';
export type * from './types';
export type { EngineNotice, KvCacheOptions, KvCacheType, LoadProgress, ModelInfo, ModelSource } from '../protocol/api';
export type { FinishedEvent, StepEvent, StepRowEvent, TokenLogprob, TokenLogprobAlternative, WaitingEvent } from '../protocol/events';
export type { StepBudget } from '../protocol/api';

export interface CreateEngineOptions extends LoadOptions, WorkerOptions {
  /** Load this model before resolving (e.g. `{ kind: 'embedded' }`); none: call engine.load() later. */
  model?: ModelSource;
}

/**
 * Starts or joins the engine worker (see browser-engine.ts for which) and loads `options.model`
 * (a source of the wrong shape is refused before any worker starts; a failed load ends the worker
 * it started, or leaves the shared one, before rejecting); or, given `backend`, serves every request from that OpenAI-compatible server instead (llama-server,
 * vLLM; no worker and no WebGPU needed) and rejects with a ServerError when it cannot connect.
 */
export async function createEngine(options: LoadOptions & { backend: ServerBackend }): Promise<CohortEngine>;
export async function createEngine(options?: CreateEngineOptions): Promise<BrowserEngine>;
export async function createEngine(options: CreateEngineOptions & { backend?: ServerBackend } = {}): Promise<BrowserEngine | CohortEngine> {
  if (options.backend) return createServerEngine(options.backend, options);
  if (options.model !== undefined) checkSource(options.model);
  checkKvOptions(options);
  const engine = await startBrowserEngine(options);
  if (options.model === undefined) return engine;
  try {
    await engine.load(options.model, options);
  } catch (err) {
    engine.terminate();
    throw err;
  }
  return engine;
}
