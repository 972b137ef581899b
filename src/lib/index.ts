// The library entry (`import { createEngine } from 'cohort'`): starts the engine worker in this page
// and returns a CohortEngine over it. Browser wiring only; the behaviour lives in engine.ts.
import type { ModelSource } from '../protocol/api';
import { CohortEngine, type LoadOptions } from './engine';
import { linkOverEndpoint, type RemoteLink } from './remote';

export { CohortEngine, type LoadOptions } from './engine';
export { AbortError, CohortError, ContextLengthError, EngineError, GpuLostError, InvalidRequestError, ModelNotLoadedError, type ErrorBody } from './errors';
export type * from './types';
export type { EngineNotice, LoadProgress, ModelInfo, ModelSource } from '../protocol/api';
export type { FinishedEvent, StepEvent, StepRowEvent, WaitingEvent } from '../protocol/events';

export interface CreateEngineOptions extends LoadOptions {
  /** Load this model before resolving (e.g. `{ kind: 'embedded' }`); none: call engine.load() later. */
  model?: ModelSource;
}

/** A CohortEngine over this page's own engine worker. */
export class BrowserEngine extends CohortEngine {
  constructor(
    private readonly worker: Worker,
    private readonly remote: RemoteLink,
  ) {
    super(remote.link);
  }

  /** Ends the worker: every request fails, the GPU device and model are freed. */
  terminate(): void {
    void this.dispose().catch(() => undefined);
    this.remote.release();
    this.worker.terminate();
  }
}

/** Starts a dedicated engine worker for this page (it owns the WebGPU device, model and KV cache). */
export async function createEngine(options: CreateEngineOptions = {}): Promise<BrowserEngine> {
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const engine = new BrowserEngine(worker, linkOverEndpoint(worker));
  if (options.model) await engine.load(options.model, options);
  return engine;
}
