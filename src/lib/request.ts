// Turns an OpenAI-shaped request into engine sessions: options per choice (system prompt, history,
// sampling, per-choice seed) and the last user message to send. Bounds are the engine's to check.
import type { ConversationMessage, SamplingParams, SessionOptions, ToolCall, TurnMessages } from '../protocol/api';
import { InvalidRequestError } from './errors';
import { planTools } from './tools';
import type { ChatCompletionContentPart, ChatCompletionCreateParams, ChatCompletionMessageParam } from './types';

/** OpenAI's own limit on `n`. */
export const MAX_CHOICES = 128;

export interface RequestPlan {
  /** One entry per choice, index order. */
  sessions: SessionOptions[];
  /**
   * The turn sent to every choice's session: the last user message's text, or the messages after
   * the last assistant message when they are tool results.
   */
  turn: string | TurnMessages;
  /** Functions a reply may call (parsed out of its text); empty: the reply is text. */
  callable: string[];
  /** The field a constraint the engine refuses is reported against: the tools' call schema or response_format. */
  constraintParam: 'tools' | 'response_format';
  /** Most calls read from one reply (parallel_tool_calls false: 1). */
  maxCalls: number;
  stream: boolean;
  includeUsage: boolean;
  /** logprobs: true: each choice's tokens come back with their log-probabilities. */
  logprobs: boolean;
}

/** Fields that would change the output in ways the engine cannot honour: refused, not ignored. */
const UNSUPPORTED: Record<string, (value: unknown) => boolean> = {
  functions: (v) => Array.isArray(v) && v.length > 0,
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
  const { systemPrompt, history, turn } = splitMessages(request.messages);
  const tools = planTools(request.tools, request.tool_choice, request.parallel_tool_calls);
  const format = constraintOf(request.response_format);
  if (format.constraint && tools.constraint && !tools.textAllowed) {
    throw new InvalidRequestError("response_format cannot be combined with tool_choice 'required' or a named function: the reply is the call", 'response_format');
  }
  // 'auto' beside a response_format: the reply is held to the format, its calls read but not constrained
  const toolConstraint = format.constraint ? undefined : tools.constraint;
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
      ...(toolConstraint ? { constraint: toolConstraint } : format),
    },
    ...(tools.tools.length > 0 ? { tools: tools.tools } : {}),
    ...(stopStrings !== undefined ? { stopStrings: stopStrings as string[] } : {}),
    ...(request.ignore_eos != null ? { ignoreEos: request.ignore_eos } : {}),
    ...predictionOf(request.prediction),
    ...speculationOf(request.speculation),
  };
  const sessions = Array.from({ length: n }, (_, i) => ({
    ...base,
    ...(seed !== undefined ? { sampling: { ...base.sampling, seed: choiceSeed(seed, i) } } : {}),
  }));
  return { sessions, turn, callable: tools.callable, constraintParam: toolConstraint ? 'tools' : 'response_format', maxCalls: tools.maxCalls, stream: request.stream === true, includeUsage: request.stream_options?.include_usage === true, logprobs: request.logprobs === true };
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

/**
 * Leading system/developer messages, then the conversation; its last user message (or the tool
 * results after the last assistant message, with any user message after them) is the turn.
 */
function splitMessages(messages: unknown): { systemPrompt?: string; history: ConversationMessage[]; turn: string | TurnMessages } {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidRequestError('messages must be a non-empty array', 'messages');
  const system: string[] = [];
  const turns: ConversationMessage[] = [];
  /** Calls made by the last assistant message and not answered yet: a tool message must answer one. */
  let open = new Set<string>();
  (messages as ChatCompletionMessageParam[]).forEach((message, i) => {
    const param = `messages[${i}]`;
    if (typeof message !== 'object' || message === null) throw new InvalidRequestError(`${param} must be a message object`, param);
    const content = textOf(message.content, `${param}.content`);
    if (message.role !== 'tool' && open.size > 0) {
      throw new InvalidRequestError(`${param}: the calls ${[...open].join(', ')} of the assistant message before it need tool messages answering them first`, `${param}.role`);
    }
    if (message.role === 'system' || message.role === 'developer') {
      if (turns.length > 0) throw new InvalidRequestError(`${param}: system messages must come before the conversation`, `${param}.role`);
      system.push(content);
    } else if (message.role === 'user') {
      turns.push({ role: 'user', content });
    } else if (message.role === 'assistant') {
      const toolCalls = toolCallsOf(message.tool_calls, `${param}.tool_calls`);
      open = new Set(toolCalls.map((c) => c.id));
      turns.push({ role: 'assistant', content, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
    } else if (message.role === 'tool') {
      const id: unknown = message.tool_call_id;
      if (typeof id !== 'string') throw new InvalidRequestError(`${param}.tool_call_id must be the id of the call this message answers`, `${param}.tool_call_id`);
      if (!open.has(id)) throw new InvalidRequestError(`${param}.tool_call_id '${id}' answers no call of the assistant message before it`, `${param}.tool_call_id`);
      open.delete(id);
      turns.push({ role: 'tool', content, toolCallId: id });
    } else {
      throw new InvalidRequestError(`${param}.role '${String(message.role)}' is not supported (system, developer, user, assistant and tool are)`, `${param}.role`);
    }
  });
  if (open.size > 0) throw new InvalidRequestError(`the calls ${[...open].join(', ')} need tool messages answering them`, `messages[${messages.length - 1}]`);
  const last = turns[turns.length - 1];
  if (!last || last.role === 'assistant') throw new InvalidRequestError('the last message must be a user or tool message', `messages[${messages.length - 1}].role`);
  if (last.role === 'user' && turns[turns.length - 2]?.role !== 'tool') {
    turns.pop();
    return { ...systemOf(system), history: turns, turn: last.content };
  }
  // tool results (and a user message after them): the messages since the last assistant one
  let start = turns.length;
  while (start > 0 && turns[start - 1]!.role !== 'assistant') start--;
  return { ...systemOf(system), history: turns.slice(0, start), turn: { messages: turns.slice(start) } };
}

function systemOf(system: string[]): { systemPrompt?: string } {
  return system.length > 0 ? { systemPrompt: system.join('\n\n') } : {};
}

/** An assistant message's `tool_calls` as the engine's, each checked (arguments are JSON text, as OpenAI returns them). */
function toolCallsOf(value: unknown, param: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidRequestError(`${param} must be an array of calls`, param);
  return value.map((call: unknown, j) => {
    const at = `${param}[${j}]`;
    const c = (typeof call === 'object' && call !== null ? call : {}) as { id?: unknown; type?: unknown; function?: { name?: unknown; arguments?: unknown } | null };
    if (typeof c.id !== 'string') throw new InvalidRequestError(`${at}.id must be a string`, `${at}.id`);
    if (c.type !== 'function') throw new InvalidRequestError(`${at}.type must be 'function'`, `${at}.type`);
    const fn = typeof c.function === 'object' && c.function !== null ? c.function : {};
    if (typeof fn.name !== 'string') throw new InvalidRequestError(`${at}.function.name must be a string`, `${at}.function.name`);
    if (typeof fn.arguments !== 'string') throw new InvalidRequestError(`${at}.function.arguments must be a string of JSON`, `${at}.function.arguments`);
    return { id: c.id, type: 'function', function: { name: fn.name, arguments: fn.arguments } };
  });
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
