// Turns an OpenAI-shaped request into engine sessions: options per choice (system prompt, history,
// sampling, per-choice seed) and the last user message to send. Bounds are the engine's to check.
import type { SamplingParams, SessionOptions } from '../protocol/api';
import { InvalidRequestError } from './errors';
import type { ChatCompletionContentPart, ChatCompletionCreateParams, ChatCompletionMessageParam } from './types';

/** OpenAI's own limit on `n`. */
export const MAX_CHOICES = 128;

export interface RequestPlan {
  /** One entry per choice, index order. */
  sessions: SessionOptions[];
  /** The last user message, sent to every choice's session. */
  userText: string;
  stream: boolean;
  includeUsage: boolean;
  /** logprobs: true: each choice's tokens come back with their log-probabilities. */
  logprobs: boolean;
}

/** Fields that would change the output in ways the engine cannot honour: refused, not ignored. */
const UNSUPPORTED: Record<string, (value: unknown) => boolean> = {
  tools: (v) => Array.isArray(v) && v.length > 0,
  functions: (v) => Array.isArray(v) && v.length > 0,
  tool_choice: (v) => v !== 'none',
  function_call: (v) => v !== 'none',
  audio: (v) => v !== null && v !== undefined,
};

/** Throws InvalidRequestError (400) for a request the engine cannot serve as asked. */
export function planRequest(request: ChatCompletionCreateParams): RequestPlan {
  if (typeof request !== 'object' || request === null) throw new InvalidRequestError('the request must be an object', null);
  for (const [field, refuses] of Object.entries(UNSUPPORTED)) {
    const value = (request as unknown as Record<string, unknown>)[field];
    if (value !== undefined && value !== null && refuses(value)) throw new InvalidRequestError(`${field} is not supported by Cohort`, field, 'unsupported_parameter');
  }
  const { systemPrompt, history, userText } = splitMessages(request.messages);
  const n = request.n ?? 1;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_CHOICES)) throw new InvalidRequestError(`n must be an integer from 1 to ${MAX_CHOICES}, got ${String(n)}`, 'n');
  const stop = request.stop ?? undefined;
  const stopStrings = stop === undefined ? undefined : typeof stop === 'string' ? [stop] : Array.isArray(stop) ? [...stop] : stop;
  const seed = request.seed ?? undefined;
  const base: SessionOptions = {
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    history,
    // absent: the engine's own default, until EOS, a stop string or the context (OpenAI's)
    ...defined('maxNewTokens', request.max_completion_tokens ?? request.max_tokens),
    sampling: {
      ...defined('temperature', request.temperature),
      ...defined('topP', request.top_p),
      ...defined('topK', request.top_k),
      ...defined('frequencyPenalty', request.frequency_penalty),
      ...defined('presencePenalty', request.presence_penalty),
      ...defined('repetitionPenalty', request.repetition_penalty),
      ...logitBiasOf(request.logit_bias),
      ...logprobsOf(request.logprobs, request.top_logprobs),
      ...constraintOf(request.response_format),
    },
    ...(stopStrings !== undefined ? { stopStrings: stopStrings as string[] } : {}),
    ...(request.ignore_eos != null ? { ignoreEos: request.ignore_eos } : {}),
    ...predictionOf(request.prediction),
    ...speculationOf(request.speculation),
  };
  const sessions = Array.from({ length: n }, (_, i) => ({
    ...base,
    ...(seed !== undefined ? { sampling: { ...base.sampling, seed: choiceSeed(seed, i) } } : {}),
  }));
  return { sessions, userText, stream: request.stream === true, includeUsage: request.stream_options?.include_usage === true, logprobs: request.logprobs === true };
}

/** `logit_bias` as the engine's (an object of token id keys); the engine checks ids and values and names the field. */
function logitBiasOf(bias: unknown): { logitBias?: Record<number, number> } {
  if (bias === undefined || bias === null) return {};
  if (typeof bias !== 'object' || Array.isArray(bias)) throw new InvalidRequestError('logit_bias must be an object mapping token ids (as strings) to biases from -100 to 100', 'logit_bias');
  return Object.keys(bias).length > 0 ? { logitBias: bias as Record<number, number> } : {};
}

/**
 * `response_format` as the engine's output constraint (absent for text). Its shape is checked
 * here; whether XGrammar can compile it, by the engine (a 400 naming response_format either way).
 */
function constraintOf(format: unknown): Pick<SamplingParams, 'constraint'> {
  if (format === undefined || format === null) return {};
  const bad = (why: string): never => {
    throw new InvalidRequestError(`response_format ${why}`, 'response_format');
  };
  if (typeof format !== 'object' || Array.isArray(format)) bad(`must be an object with a type, got ${JSON.stringify(format)}`);
  const f = format as Record<string, unknown>;
  switch (f.type) {
    case 'text':
      return {};
    case 'json_object':
      return { constraint: { kind: 'json_object' } };
    case 'json_schema': {
      const js = f.json_schema as Record<string, unknown> | undefined;
      if (typeof js !== 'object' || js === null || Array.isArray(js)) return bad("of type 'json_schema' needs json_schema: { name, schema?, strict?, description? }");
      if (typeof js.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(js.name)) bad(`json_schema.name must be 1 to 64 letters, digits, _ or -, got ${JSON.stringify(js.name)}`);
      if (js.strict !== undefined && js.strict !== null && typeof js.strict !== 'boolean') bad(`json_schema.strict must be true, false or null, got ${JSON.stringify(js.strict)}`);
      if (js.description !== undefined && typeof js.description !== 'string') bad('json_schema.description must be a string');
      if (js.schema === undefined || js.schema === null) return { constraint: { kind: 'json_object' } };
      if (typeof js.schema !== 'object' || Array.isArray(js.schema)) bad(`json_schema.schema must be a JSON Schema object, got ${JSON.stringify(js.schema)}`);
      return { constraint: { kind: 'json_schema', schema: JSON.stringify(js.schema) } };
    }
    case 'grammar':
      if (typeof f.grammar !== 'string' || f.grammar.trim() === '') bad("of type 'grammar' needs grammar: an EBNF grammar text (XGrammar's dialect, a rule named root)");
      return { constraint: { kind: 'ebnf', grammar: f.grammar as string } };
    case 'regex':
      if (typeof f.pattern !== 'string' || f.pattern === '') bad("of type 'regex' needs pattern: a regular expression");
      return { constraint: { kind: 'regex', pattern: f.pattern as string } };
    default:
      return bad(`type must be 'text', 'json_object', 'json_schema', or Cohort's 'grammar' or 'regex', got ${JSON.stringify(f.type)}`);
  }
}

/** `logprobs` and `top_logprobs` as the engine's `logprobs` (the top count; absent: none), as OpenAI checks them. */
function logprobsOf(logprobs: unknown, top: unknown): { logprobs?: number } {
  if (logprobs !== undefined && logprobs !== null && typeof logprobs !== 'boolean') throw new InvalidRequestError(`logprobs must be true or false, got ${JSON.stringify(logprobs)}`, 'logprobs');
  if (top === undefined || top === null) return logprobs === true ? { logprobs: 0 } : {};
  if (logprobs !== true) throw new InvalidRequestError('top_logprobs needs logprobs: true', 'top_logprobs');
  if (!(Number.isInteger(top) && (top as number) >= 0 && (top as number) <= 20)) throw new InvalidRequestError(`top_logprobs must be an integer from 0 to 20, got ${JSON.stringify(top)}`, 'top_logprobs');
  return { logprobs: top as number };
}

/**
 * Choice i's seed: the request's own for choice 0, so `n: 1` and the first of `n: 4` agree, and a
 * mix of (seed, i) for the others, so siblings draw apart yet repeat with the same seed. A seed the
 * engine will refuse (fractional, negative, too big) passes through unchanged for it to name.
 */
export function choiceSeed(seed: number, index: number): number {
  if (index === 0 || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) return seed;
  let h = (seed ^ Math.imul(index, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** `prediction` as the engine's predictionText (it encodes it with the model's tokenizer). */
function predictionOf(prediction: unknown): { predictionText?: string } {
  if (prediction === undefined || prediction === null) return {};
  if (typeof prediction !== 'object' || Array.isArray(prediction)) throw new InvalidRequestError("prediction must be an object { type: 'content', content }", 'prediction');
  const { type, content } = prediction as { type?: unknown; content?: unknown };
  if (type !== 'content') throw new InvalidRequestError(`prediction.type must be 'content', got ${JSON.stringify(type) ?? String(type)}`, 'prediction.type');
  if (typeof content !== 'string' && !Array.isArray(content)) {
    throw new InvalidRequestError(`prediction.content must be a string or an array of text parts, got ${content === null ? 'null' : typeof content}`, 'prediction.content');
  }
  return { predictionText: textOf(content as string | ChatCompletionContentPart[], 'prediction.content') };
}

/** `speculation` as the engine's option; the engine checks the values and names the field. */
function speculationOf(speculation: unknown): { speculation?: SessionOptions['speculation'] } {
  if (speculation === undefined || speculation === null) return {};
  if (typeof speculation === 'object' && !Array.isArray(speculation)) {
    const keys = Object.keys(speculation);
    if (keys.length !== 1 || keys[0] !== 'max_draft_tokens') throw new InvalidRequestError("speculation must be 'auto', 'off' or { max_draft_tokens }", 'speculation');
    return { speculation: { maxDraftTokens: (speculation as { max_draft_tokens: number }).max_draft_tokens } };
  }
  return { speculation: speculation as 'auto' };
}

function defined<K extends string>(key: K, value: number | null | undefined): Partial<Record<K, number>> {
  return value === null || value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** Leading system/developer messages, then user/assistant turns ending with the user message to answer. */
function splitMessages(messages: unknown): { systemPrompt?: string; history: Array<{ role: 'user' | 'assistant'; content: string }>; userText: string } {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidRequestError('messages must be a non-empty array', 'messages');
  const system: string[] = [];
  const turns: Array<{ role: 'user' | 'assistant'; content: string }> = [];
  (messages as ChatCompletionMessageParam[]).forEach((message, i) => {
    const param = `messages[${i}]`;
    if (typeof message !== 'object' || message === null) throw new InvalidRequestError(`${param} must be a message object`, param);
    const content = textOf(message.content, `${param}.content`);
    if (message.role === 'system' || message.role === 'developer') {
      if (turns.length > 0) throw new InvalidRequestError(`${param}: system messages must come before the conversation`, `${param}.role`);
      system.push(content);
    } else if (message.role === 'user' || message.role === 'assistant') {
      turns.push({ role: message.role, content });
    } else {
      throw new InvalidRequestError(`${param}.role '${String(message.role)}' is not supported (system, developer, user and assistant are)`, `${param}.role`);
    }
  });
  const last = turns.pop();
  if (!last || last.role !== 'user') throw new InvalidRequestError('the last message must be a user message', `messages[${messages.length - 1}].role`);
  return { ...(system.length > 0 ? { systemPrompt: system.join('\n\n') } : {}), history: turns, userText: last.content };
}

function textOf(content: string | ReadonlyArray<ChatCompletionContentPart> | null | undefined, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new InvalidRequestError(`${param} must be a string or an array of text parts`, param);
  return content
    .map((part: ChatCompletionContentPart, j) => {
      if (part?.type !== 'text' || typeof part.text !== 'string') throw new InvalidRequestError(`${param}[${j}]: only text parts are supported, got '${String(part?.type)}'`, `${param}[${j}]`);
      return part.text;
    })
    .join('');
}
