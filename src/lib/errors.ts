// The library's typed errors, shaped like the OpenAI SDK's APIError (status, type, code, param,
// message, error body) so code that handles the SDK's errors handles these. No engine logic here.
import type { ModelSource } from '../protocol/api';
import { loadErrorCodeOf, MODEL_LOAD_ERRORS, type ModelLoadErrorCode } from '../protocol/load-errors';
import { checkModelSource } from '../protocol/model-source';
import { kvOptionsShapeProblem, type KvCacheOptions } from '../protocol/kv-options';

/** The `error` object of OpenAI's error responses. */
export interface ErrorBody {
  message: string;
  type: string;
  code: string | null;
  param: string | null;
}

/** Base of every error the library throws for a request or a load; `status` follows the HTTP code OpenAI would send. */
export class CohortError extends Error {
  readonly status: number | undefined;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  /** True where the same request may succeed when sent again (GPU lost and recovered). */
  readonly retryable: boolean;
  readonly error: ErrorBody;

  constructor(message: string, fields: { status?: number; type: string; code?: string | null; param?: string | null; retryable?: boolean }) {
    super(message);
    this.name = 'CohortError';
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code ?? null;
    this.param = fields.param ?? null;
    this.retryable = fields.retryable ?? false;
    this.error = { message, type: this.type, code: this.code, param: this.param };
  }
}

/** 400: a field out of bounds or not supported; `param` names it (e.g. 'temperature', 'messages[2].role'). */
export class InvalidRequestError extends CohortError {
  constructor(message: string, param: string | null, code = 'invalid_value') {
    super(message, { status: 400, type: 'invalid_request_error', code, param });
    this.name = 'InvalidRequestError';
  }
}

/** 400: the prompt does not fit the context (the model's, or the KV pool's when smaller). */
export class ContextLengthError extends InvalidRequestError {
  readonly promptTokens: number;
  readonly contextTokens: number;

  constructor(promptTokens: number, contextTokens: number) {
    super(
      `This model's maximum context length is ${contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens, ` +
        'and at least one more is needed for the completion. Please reduce the length of the messages.',
      'messages',
      'context_length_exceeded',
    );
    this.name = 'ContextLengthError';
    this.promptTokens = promptTokens;
    this.contextTokens = contextTokens;
  }
}

/** The request's AbortSignal fired (the SDK's APIUserAbortError); it has no HTTP status. */
export class AbortError extends CohortError {
  constructor(message = 'Request was aborted.', code = 'aborted') {
    super(message, { type: 'aborted', code });
    this.name = 'AbortError';
  }
}

/**
 * The engine was terminated (BrowserEngine.terminate()) while the request ran, or before it was sent:
 * an abort this page asked for, so it is an AbortError too, with its own code.
 */
export class EngineTerminatedError extends AbortError {
  constructor(message = 'The engine was terminated: create a new engine to send requests.') {
    super(message, 'engine_terminated');
    this.name = 'EngineTerminatedError';
  }
}

/**
 * 408, retryable: the shared engine worker dropped this tab after its heartbeat expired (the tab was
 * frozen or throttled past `heartbeat.timeoutMs`) and cancelled its requests. The engine joins the
 * worker again by itself: sent again, the request runs.
 */
export class TabExpiredError extends CohortError {
  constructor(message = "this tab's engine connection ended (silent): the engine dropped this tab after its heartbeat expired and cancelled its requests") {
    super(message, { status: 408, type: 'server_error', code: 'tab_expired', retryable: true });
    this.name = 'TabExpiredError';
  }
}

/** 404: no model is loaded (call engine.load first), or it was unloaded. */
export class ModelNotLoadedError extends CohortError {
  constructor(message = 'No model is loaded: call engine.load(source) first.') {
    super(message, { status: 404, type: 'invalid_request_error', code: 'model_not_loaded' });
    this.name = 'ModelNotLoadedError';
  }
}

/** 503, retryable: the GPU device was lost mid-request; the engine re-creates it and reloads the model. */
export class GpuLostError extends CohortError {
  constructor(message: string) {
    super(message, { status: 503, type: 'server_error', code: 'gpu_lost', retryable: true });
    this.name = 'GpuLostError';
  }
}

/** 500: the engine ended the request with an error of its own (e.g. the model produced NaN logits). */
export class EngineError extends CohortError {
  constructor(message: string) {
    super(message, { status: 500, type: 'server_error', code: 'engine_error' });
    this.name = 'EngineError';
  }
}

/**
 * 409, retryable: a model load (from this page or another tab) replaced the model while the request
 * ran; its turns ended. Sent again, the request runs on the new model.
 */
export class ModelChangedError extends CohortError {
  constructor(message = 'The model was replaced during the request; send it again.') {
    super(message, { status: 409, type: 'invalid_request_error', code: 'model_changed', retryable: true });
    this.name = 'ModelChangedError';
  }
}

/**
 * A model could not be loaded; `code` says why and sets `status` (src/protocol/load-errors.ts):
 * 'model_not_found' 404, 'model_format' 422, 'unsupported_architecture' 422, 'model_too_large' 413,
 * 'network_error' 502 (retryable), 'load_in_progress' 409, 'model_load_failed' 500. `param` names
 * the source's field at fault (e.g. 'model.repoId'). A source of the wrong shape, or a KV option the model
 * cannot take ('invalid_kv_cache'), is an InvalidRequestError.
 */
export class ModelLoadError extends CohortError {
  declare readonly code: ModelLoadErrorCode;

  constructor(message: string, code: ModelLoadErrorCode = 'model_load_failed', param: string | null = null) {
    const kind = MODEL_LOAD_ERRORS[code];
    super(message, { status: kind.status, type: kind.type, code, param, retryable: code === 'network_error' });
    this.name = 'ModelLoadError';
  }
}

/** The source field a load failure is about, as `param` names it. */
function paramOfSource(source: ModelSource): string | null {
  switch (source.kind) {
    case 'huggingface':
      return source.file ? 'model.file' : 'model.repoId';
    case 'url':
      return 'model.url';
    case 'files':
      return 'model.files';
    case 'server':
      return 'model.baseUrl';
    case 'embedded':
      return null;
  }
}

/** Refuses a source of the wrong shape before anything starts: an InvalidRequestError naming the field. */
export function checkSource(source: unknown): asserts source is ModelSource {
  const bad = checkModelSource(source);
  if (bad) throw new InvalidRequestError(bad.message, bad.param);
}

/** Refuses a kvCacheType or kvCacheBytes of the wrong shape before any worker is asked (the worker checks them against the model). */
export function checkKvOptions(options: KvCacheOptions): void {
  const bad = kvOptionsShapeProblem({ kvCacheType: options.kvCacheType, kvCacheBytes: options.kvCacheBytes });
  if (bad) throw new InvalidRequestError(bad.message, bad.param);
}

/** What engine.load() rejects with: the worker's load failure (comlink carries its name and message), typed. */
export function fromLoadError(err: unknown, source: ModelSource): CohortError {
  if (err instanceof CohortError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  const code = loadErrorCodeOf(e.name) ?? 'model_load_failed';
  // the worker's message starts with the option's name (comlink carries no param)
  if (code === 'invalid_kv_cache') return new InvalidRequestError(e.message, e.message.startsWith('kvCacheBytes') ? 'kvCacheBytes' : 'kvCacheType');
  const param = code === 'load_in_progress' || code === 'model_load_failed' ? null : paramOfSource(source);
  if (code === 'invalid_model_source') return new InvalidRequestError(e.message, param ?? 'model.kind');
  return new ModelLoadError(e.message, code, param);
}

/** 503: the engine worker did not start (its script failed to load or run, or it never answered); names its URL. */
export class EngineStartError extends CohortError {
  constructor(
    readonly workerUrl: string,
    readonly reason: string,
  ) {
    super(`the engine worker ${workerUrl || '(no URL)'} did not start: ${reason}`, { status: 503, type: 'server_error', code: 'worker_start_failed' });
    this.name = 'EngineStartError';
  }
}
