// The library's request and response types, shaped like OpenAI's chat completions so code written
// against the OpenAI JS SDK compiles against them. Types only; the behaviour is in completions.ts.
import type { ModelInfo } from '../protocol/api';

/** A content part: text is read; any other part type (image, audio, file) is refused at run time. */
export interface ChatCompletionContentPart {
  type: string;
  text?: string;
}

/**
 * A message as the SDK sends it. Roles 'system' and 'developer' (one system prompt), 'user',
 * 'assistant' (with `tool_calls`, content then may be null) and 'tool' (a call's result, with
 * `tool_call_id`) are served; 'function' messages (deprecated) are accepted by the type and
 * refused at run time with a 400.
 */
export interface ChatCompletionMessageParam {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | ReadonlyArray<ChatCompletionContentPart> | null;
  name?: string;
  /** An assistant message's calls, as a reply returned them. */
  tool_calls?: ReadonlyArray<ChatCompletionMessageToolCall | { type: string; id: string }> | null;
  /** A tool message: the id of the call it answers. */
  tool_call_id?: string;
}

/** A function the model may call (OpenAI's function tool). */
export interface ChatCompletionFunctionTool {
  type: 'function';
  function: {
    /** 1 to 64 letters, digits, '_' or '-'. */
    name: string;
    description?: string;
    /** A JSON Schema object for the arguments (absent: none). */
    parameters?: Record<string, unknown>;
    strict?: boolean | null;
  };
}

/** 'none': no tools in the prompt; 'auto': the model may call; 'required' or a named function: it must (its output constrained to the call). */
export type ChatCompletionToolChoiceOption = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** A call the model made: `arguments` is JSON text. */
export interface ChatCompletionMessageToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A call in a stream chunk: each call comes whole in one delta, `index` its place in the reply's calls. */
export interface ChatCompletionChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionStreamOptions {
  /** Send one last chunk with `usage` (and `timings`) and empty `choices`. */
  include_usage?: boolean;
  include_obfuscation?: boolean;
}

/**
 * `response_format`: free text, JSON mode (any JSON object), a JSON Schema (as OpenAI shapes it;
 * `strict` is accepted and always holds: the reply is constrained to the schema), and Cohort's
 * extensions: an EBNF grammar as XGrammar reads it (WebLLM's `grammar` shape) or a regular
 * expression. Every reply that stops (finish_reason 'stop') parses; one cut by max_tokens says 'length'.
 */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: ResponseFormatJSONSchema }
  | { type: 'grammar'; grammar: string }
  | { type: 'regex'; pattern: string };

export interface ResponseFormatJSONSchema {
  name: string;
  description?: string;
  /** The JSON Schema; absent: any JSON value. */
  schema?: Record<string, unknown>;
  strict?: boolean | null;
}

/**
 * The request. Fields OpenAI defines that change the output and that Cohort cannot honour
 * (functions, audio) are refused with a 400;
 * the rest of the SDK's fields (metadata, store, user...) are accepted and have no effect.
 */
export interface ChatCompletionCreateParamsBase {
  messages: ReadonlyArray<ChatCompletionMessageParam>;
  /** Ignored: the engine serves the one model it has loaded (its name comes back in `model`). */
  model?: string;
  stream?: boolean | null;
  stream_options?: ChatCompletionStreamOptions | null;
  max_tokens?: number | null;
  /** Preferred over max_tokens when both are given, as in OpenAI's API. */
  max_completion_tokens?: number | null;
  /** 0 (default) is greedy. */
  temperature?: number | null;
  top_p?: number | null;
  /** Not in OpenAI's API (vLLM's and llama.cpp's extension); 0 = no cut. */
  top_k?: number | null;
  /** Choice i samples with a seed derived from this one and i (choice 0 uses it as it is). */
  seed?: number | null;
  stop?: string | ReadonlyArray<string> | null;
  /** Choices to generate, each its own engine session in the same cohort. */
  n?: number | null;
  /** Keep generating past EOS until the token limit (vLLM's extension). */
  ignore_eos?: boolean | null;
  /**
   * Cohort's extension: speculative decoding for this request. 'auto' (default): drafts where the
   * engine's step cost model says they pay; 'off'; `{ max_draft_tokens }` (0 to 32): that many
   * drafts a step whatever they cost. The reply is the same either way; only its speed differs.
   */
  speculation?: 'auto' | 'off' | { max_draft_tokens: number } | null;
  /**
   * Return each generated token's log-probability (`choices[i].logprobs.content`), from the
   * distribution it was drawn from: the logits after logit_bias and the penalties, scaled by
   * 1/temperature (temperature 0: by 1), over the whole vocabulary, before top_k and top_p.
   */
  logprobs?: boolean | null;
  /** With logprobs: this many most likely tokens at each position too (0 to 20). */
  top_logprobs?: number | null;
  /** Token id (a string key, as OpenAI's) -> -100..100, added to that token's logit. */
  logit_bias?: Record<string, number> | null;
  /** -2..2: subtracted from a token's logit per time it occurs in the reply so far. */
  frequency_penalty?: number | null;
  /** -2..2: subtracted once from the logit of every token the reply holds. */
  presence_penalty?: number | null;
  /**
   * Cohort's extension (vLLM's and llama.cpp's repetition_penalty; > 0, 1 = off): the logit of a
   * token in the prompt or the reply so far is divided by it when positive, multiplied when not.
   */
  repetition_penalty?: number | null;
  /**
   * Functions the model may call, handed to the model's chat template (or, where the template has
   * none, listed in the system prompt: `engine.models[0].toolsRendering` says which). Calls come
   * back as `message.tool_calls` with finish_reason 'tool_calls'. Only function tools are served.
   */
  tools?: ReadonlyArray<ChatCompletionFunctionTool | { type: string }> | null;
  /** Default 'auto' with tools, 'none' without. */
  tool_choice?: ChatCompletionToolChoiceOption | { type: string } | null;
  /** false: a reply makes at most one call (the first; what follows it is dropped). Default true. */
  parallel_tool_calls?: boolean | null;
  // Declared so the SDK's requests type-check; refused at run time when set to do something.
  functions?: unknown;
  function_call?: unknown;
  audio?: unknown;
  /** Constrains the reply (ResponseFormat); a malformed one or a schema XGrammar cannot compile is a 400 naming response_format. */
  response_format?: ResponseFormat | null;
  /**
   * OpenAI's Predicted Outputs: text the reply is expected to be (largely), e.g. a file being
   * edited. A draft source for speculative decoding, never forced into the output; usage then
   * reports completion_tokens_details.accepted_prediction_tokens and rejected_prediction_tokens.
   */
  prediction?: ChatCompletionPredictionContent | null;
}

/** `prediction`: `content` a string, or text parts joined as messages' are. */
export interface ChatCompletionPredictionContent {
  type: 'content';
  content: string | ReadonlyArray<ChatCompletionContentPart>;
}

export interface ChatCompletionCreateParamsStreaming extends ChatCompletionCreateParamsBase {
  stream: true;
}

export interface ChatCompletionCreateParamsNonStreaming extends ChatCompletionCreateParamsBase {
  stream?: false | null;
}

export type ChatCompletionCreateParams = ChatCompletionCreateParamsStreaming | ChatCompletionCreateParamsNonStreaming;

export interface RequestOptions {
  /** Aborting ends this request only: its sessions are cancelled and their KV blocks freed. */
  signal?: AbortSignal;
}

/** 'stop': EOS or a stop string; 'length': the token limit, or the context or KV pool filled up; 'tool_calls': the reply called tools. */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

/**
 * Cohort's own figures for a request (all choices together), from the StepEvents of its sessions
 * through src/protocol/metrics.ts, on the engine's clock.
 */
export interface CompletionTimings {
  /** Prompt tokens fed over the wall time of the steps that carried them. */
  prefill_tokens_per_second: number;
  /** Decode tokens over the wall time of the steps in which the request only decoded. */
  decode_tokens_per_second: number;
  /** From when the engine first shows the request to the end of the step with its first token. */
  time_to_first_token_ms: number | null;
  /** Mean rows (sessions) per step over the steps the request rode in. */
  mean_cohort_size: number;
  /** Steps (forward passes) the request rode in. */
  steps: number;
  /**
   * Tokens each choice's decode row made per step it rode in (speculationFigures): 1 for plain
   * decode, more where drafted tokens were accepted; 0 without decode rows.
   */
  tokens_per_row_step: number;
  /** Drafted tokens fed for verification (speculative decoding), all choices together. */
  drafted_tokens: number;
  /** Of those, the ones accepted. */
  accepted_draft_tokens: number;
  /** accepted_draft_tokens / drafted_tokens; null when nothing was drafted. */
  draft_acceptance_rate: number | null;
}

export interface CompletionUsage {
  /** The prompt, counted once for all choices. */
  prompt_tokens: number;
  /** All choices together. */
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: {
    /** Prompt tokens of the first choice found in the engine's prefix cache. */
    cached_tokens: number;
  };
  /**
   * Predicted Outputs, all choices together (each choice's reply against the one prediction);
   * both 0 without a `prediction`. accepted: prediction tokens that appeared in the reply, in
   * order (the longest common subsequence of the two, src/engine/prediction.ts); rejected: the
   * prediction's other tokens. Unlike OpenAI's billing count, completion_tokens does not include
   * the rejected ones: it counts the tokens generated.
   */
  completion_tokens_details: {
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
  timings: CompletionTimings;
}

export interface ChatCompletionMessage {
  role: 'assistant';
  /** null when the reply is only tool calls; else the text (before the calls, with them). */
  content: string | null;
  refusal: string | null;
  /** Present when the reply called tools. */
  tool_calls?: ChatCompletionMessageToolCall[];
}

/** One alternative at a token's position (OpenAI's shape). */
export interface TopLogprob {
  token: string;
  logprob: number;
  /** UTF-8 bytes of `token` (the tokenizer's text of that token alone). */
  bytes: number[] | null;
}

/** One generated token's log-probability and the most likely tokens at its position. */
export interface ChatCompletionTokenLogprob extends TopLogprob {
  top_logprobs: TopLogprob[];
}

/** `choices[i].logprobs` of a request with logprobs: true (null without). */
export interface ChoiceLogprobs {
  content: ChatCompletionTokenLogprob[] | null;
  refusal: ChatCompletionTokenLogprob[] | null;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{ index: number; message: ChatCompletionMessage; finish_reason: FinishReason; logprobs: ChoiceLogprobs | null }>;
  usage: CompletionUsage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: number; delta: { role?: 'assistant'; content?: string | null; tool_calls?: ChatCompletionChunkToolCall[] }; finish_reason: FinishReason | null; logprobs?: ChoiceLogprobs | null }>;
  /** Only on the last chunk, and only with stream_options.include_usage (null before it). */
  usage?: CompletionUsage | null;
}

/** The stream a streaming create() resolves to; `controller.abort()` ends it like the signal. */
export interface ChatCompletionStream extends AsyncIterable<ChatCompletionChunk> {
  controller: AbortController;
}

/** What engine.models lists: the loaded model, as the worker describes it. */
export type LoadedModel = ModelInfo & { id: string };
