// Why a model load failed, as both sides of the worker boundary name it: one code per cause, with the
// HTTP-like status and OpenAI error type the library reports. Data and pure functions; no fetching.

export type ModelLoadErrorCode =
  | 'invalid_model_source'
  | 'model_not_found'
  | 'model_format'
  | 'unsupported_architecture'
  | 'network_error'
  | 'model_too_large'
  | 'load_in_progress'
  | 'invalid_kv_cache'
  | 'model_load_failed';

export interface ModelLoadErrorKind {
  /** The error's `name`: comlink carries name and message across the worker, so the name says the code. */
  name: string;
  status: number;
  type: 'invalid_request_error' | 'server_error';
}

/** The one table of load failures; src/lib/errors.ts builds its ModelLoadError from it. */
export const MODEL_LOAD_ERRORS: Record<ModelLoadErrorCode, ModelLoadErrorKind> = {
  invalid_model_source: { name: 'InvalidModelSourceError', status: 400, type: 'invalid_request_error' },
  model_not_found: { name: 'ModelNotFoundError', status: 404, type: 'invalid_request_error' },
  // the name src/model's loaders already throw: a raw one crossing the worker reads the same
  model_format: { name: 'ModelFormatError', status: 422, type: 'invalid_request_error' },
  unsupported_architecture: { name: 'UnsupportedArchitectureError', status: 422, type: 'invalid_request_error' },
  network_error: { name: 'ModelNetworkError', status: 502, type: 'server_error' },
  model_too_large: { name: 'ModelTooLargeError', status: 413, type: 'invalid_request_error' },
  load_in_progress: { name: 'LoadInProgressError', status: 409, type: 'invalid_request_error' },
  // a kvCacheType or kvCacheBytes the model or pool cannot take (src/protocol/kv-options.ts)
  invalid_kv_cache: { name: 'InvalidKvCacheError', status: 400, type: 'invalid_request_error' },
  model_load_failed: { name: 'ModelLoadError', status: 500, type: 'server_error' },
};

/** What the worker throws for a failed load; `param` names the source field at fault where one is. */
export class ModelLoadFailure extends Error {
  constructor(
    readonly code: ModelLoadErrorCode,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = MODEL_LOAD_ERRORS[code].name;
  }
}

/** FinishedEvent.code of a turn a model load cut short, and the name of the error for a replaced model's session. */
export const MODEL_CHANGED = 'model_changed' as const;
export const MODEL_CHANGED_ERROR_NAME = 'ModelChangedError';

/** A call named a session of a model that a load has since replaced (its sessions went with it). */
export class ModelChangedFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = MODEL_CHANGED_ERROR_NAME;
  }
}

/** The code an error's name stands for (after a trip across the worker), or null for other errors. */
export function loadErrorCodeOf(name: string): ModelLoadErrorCode | null {
  for (const [code, kind] of Object.entries(MODEL_LOAD_ERRORS)) if (kind.name === name) return code as ModelLoadErrorCode;
  return null;
}

// Facts the loaders' messages carry (src/model/byte-source.ts, hf-loader.ts, hf-config.ts, gguf-config.ts,
// src/gpu/weights.ts, kv-arena.ts); they are classified here so the loaders keep one error type each.
const NOT_FOUND = /: HTTP (401|403|404)\b|^config\.json: missing from the model folder/;
const UNSUPPORTED_ARCH = /unsupported architecture/;
const TOO_LARGE = /this device binds at most|out of memory|at least 2 are needed \(block 0 is reserved\)/i;

/** Whatever a load threw, as a ModelLoadFailure with the same message (e.g. for the page to show). */
export function toLoadFailure(err: unknown): ModelLoadFailure {
  if (err instanceof ModelLoadFailure) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  if (e.name === 'FetchFailure') return new ModelLoadFailure('network_error', e.message);
  if (e.name === 'ModelFormatError') {
    if (NOT_FOUND.test(e.message)) return new ModelLoadFailure('model_not_found', e.message);
    if (UNSUPPORTED_ARCH.test(e.message)) return new ModelLoadFailure('unsupported_architecture', e.message);
    return new ModelLoadFailure('model_format', e.message);
  }
  if (TOO_LARGE.test(e.message)) return new ModelLoadFailure('model_too_large', e.message);
  return new ModelLoadFailure('model_load_failed', e.message);
}
