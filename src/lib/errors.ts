// The library's typed errors, shaped like the OpenAI SDK's APIError (status, type, code, param,
// message, error body) so code that handles the SDK's errors handles these. No engine logic here.

/** The `error` object of OpenAI's error responses. */
export interface ErrorBody {
  message: string;
  type: string;
  code: string | null;
  param: string | null;
}

/** Base of every error the library throws for a request; `status` follows the HTTP code OpenAI would send. */
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
  constructor(message = 'Request was aborted.') {
    super(message, { type: 'aborted', code: 'aborted' });
    this.name = 'AbortError';
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
