// A chat pane's settings as the page keeps them (sampling, penalties, logit bias, response format,
// logprobs, speculation), their reading back from storage and their mapping to SessionOptions. Pure.
import type { SessionOptions } from '../../protocol/api';
import { readSpeculation, sameSpeculation, type SpeculationSetting } from './speculation-view';

/** What the reply must be: free text, any JSON object, or JSON that follows `jsonSchema`. */
export type ResponseFormatKind = 'text' | 'json_object' | 'json_schema';
export const RESPONSE_FORMAT_KINDS: readonly ResponseFormatKind[] = ['text', 'json_object', 'json_schema'];

export interface SessionSettings {
  systemPrompt: string;
  temperature: number;
  topP: number;
  topK: number;
  maxNewTokens: number;
  /** null: the engine picks one per session. */
  seed: number | null;
  /** Speculative decoding: 'auto' (the engine's choice), 'off', or a fixed draft length. */
  speculation: SpeculationSetting;
  /** OpenAI's frequency_penalty and presence_penalty (0: off). */
  frequencyPenalty: number;
  presencePenalty: number;
  /** llama.cpp's and vLLM's repetition_penalty (1: off). */
  repetitionPenalty: number;
  /** Logit bias as typed, `token id: bias` pairs split by commas (`13: -100, 42: 5`); '' none. */
  logitBias: string;
  responseFormat: ResponseFormatKind;
  /** The JSON schema's text as typed: kept while another format is picked, used with 'json_schema'. */
  jsonSchema: string;
  /** Top alternatives returned with each token's log-probability (0-20); null: logprobs off. */
  logprobs: number | null;
}

/** The form's bounds; the engine checks the same ranges again when the session is created. */
export const PENALTY_LIMIT = 2;
export const MAX_REPETITION_PENALTY = 100;
export const LOGIT_BIAS_LIMIT = 100;
export const MAX_TOP_LOGPROBS = 20;

export const DEFAULT_SETTINGS: SessionSettings = {
  systemPrompt: '',
  temperature: 0.7,
  topP: 0.95,
  topK: 40,
  maxNewTokens: 128,
  seed: null,
  speculation: 'auto',
  frequencyPenalty: 0,
  presencePenalty: 0,
  repetitionPenalty: 1,
  logitBias: '',
  responseFormat: 'text',
  jsonSchema: '',
  logprobs: null,
};

/** Why a JSON schema's text cannot be used, or null when it parses as a JSON object. */
export function jsonSchemaProblem(text: string): string | null {
  if (text.trim() === '') return 'The JSON schema is empty: type one or pick an example.';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `The JSON schema is not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `A JSON schema is a JSON object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}.`;
  return null;
}

/** Logit bias text as token id -> bias, or what is wrong with it (the first bad pair, by its place). */
export function parseLogitBias(text: string): { bias: Record<number, number> } | { error: string } {
  const bias: Record<number, number> = {};
  const pairs = text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  for (const [i, pair] of pairs.entries()) {
    const match = /^(\d+)\s*:\s*(-?\d+(?:\.\d+)?)$/.exec(pair);
    if (!match) return { error: `Logit bias pair ${i + 1} ("${pair}") is not "token id: bias" (e.g. "13: -100").` };
    const id = Number(match[1]);
    const value = Number(match[2]);
    if (!Number.isSafeInteger(id)) return { error: `Logit bias pair ${i + 1}: token id ${match[1]} is too large.` };
    if (Math.abs(value) > LOGIT_BIAS_LIMIT) return { error: `Logit bias pair ${i + 1}: bias ${value} is outside -${LOGIT_BIAS_LIMIT}..${LOGIT_BIAS_LIMIT}.` };
    if (id in bias) return { error: `Logit bias pair ${i + 1}: token ${id} is named twice.` };
    bias[id] = value;
  }
  return { bias };
}

/** Every problem with the settings a send would meet, for the form to show beside the fields. */
export function settingsProblems(settings: SessionSettings): { jsonSchema?: string; logitBias?: string } {
  const schema = settings.responseFormat === 'json_schema' ? jsonSchemaProblem(settings.jsonSchema) : null;
  const bias = parseLogitBias(settings.logitBias);
  return { ...(schema ? { jsonSchema: schema } : {}), ...('error' in bias ? { logitBias: bias.error } : {}) };
}

/** The engine's output constraint for the response format; none for text. Throws on a bad schema. */
function constraintOf(settings: SessionSettings): NonNullable<NonNullable<SessionOptions['sampling']>['constraint']> | undefined {
  if (settings.responseFormat === 'json_object') return { kind: 'json_object' };
  if (settings.responseFormat !== 'json_schema') return undefined;
  const problem = jsonSchemaProblem(settings.jsonSchema);
  if (problem) throw new Error(`Response format: ${problem}`);
  // One spelling per schema, so panes that format the same schema differently share its compiled grammar.
  return { kind: 'json_schema', schema: JSON.stringify(JSON.parse(settings.jsonSchema)) };
}

/**
 * The engine session's options. Neutral penalties and an empty bias are left out (the engine's
 * defaults). Throws an Error saying what is wrong when the schema or the bias text is malformed:
 * the send that creates the session then fails with it and the message goes back to the composer.
 */
export function toSessionOptions(settings: SessionSettings): SessionOptions {
  const bias = parseLogitBias(settings.logitBias);
  if ('error' in bias) throw new Error(bias.error);
  const constraint = constraintOf(settings);
  return {
    ...(settings.systemPrompt.trim() ? { systemPrompt: settings.systemPrompt } : {}),
    sampling: {
      temperature: settings.temperature,
      topP: settings.topP,
      topK: settings.topK,
      ...(settings.seed === null ? {} : { seed: settings.seed }),
      ...(settings.frequencyPenalty !== 0 ? { frequencyPenalty: settings.frequencyPenalty } : {}),
      ...(settings.presencePenalty !== 0 ? { presencePenalty: settings.presencePenalty } : {}),
      ...(settings.repetitionPenalty !== 1 ? { repetitionPenalty: settings.repetitionPenalty } : {}),
      ...(Object.keys(bias.bias).length > 0 ? { logitBias: bias.bias } : {}),
      ...(settings.logprobs !== null ? { logprobs: settings.logprobs } : {}),
      ...(constraint ? { constraint } : {}),
    },
    maxNewTokens: settings.maxNewTokens,
    // 'auto' is the engine's default: left out
    ...(settings.speculation !== 'auto' ? { speculation: settings.speculation } : {}),
  };
}

export function sameSettings(a: SessionSettings, b: SessionSettings): boolean {
  const { speculation: sa, ...restA } = a;
  const { speculation: sb, ...restB } = b;
  return sameSpeculation(sa, sb) && (Object.keys(restA) as (keyof typeof restA)[]).every((key) => restA[key] === restB[key]);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * Saved settings back; a field that is missing (a record saved before the field existed) or
 * malformed takes its default, so every older record still loads.
 */
export function readSettings(raw: unknown): SessionSettings {
  if (!isObject(raw)) return DEFAULT_SETTINGS;
  const num = (key: 'temperature' | 'topP' | 'topK' | 'maxNewTokens' | 'frequencyPenalty' | 'presencePenalty' | 'repetitionPenalty') => (isFiniteNumber(raw[key]) ? raw[key] : DEFAULT_SETTINGS[key]);
  const text = (key: 'systemPrompt' | 'logitBias' | 'jsonSchema') => (typeof raw[key] === 'string' ? raw[key] : DEFAULT_SETTINGS[key]);
  const logprobs = raw.logprobs;
  return {
    systemPrompt: text('systemPrompt'),
    temperature: num('temperature'),
    topP: num('topP'),
    topK: num('topK'),
    maxNewTokens: num('maxNewTokens'),
    seed: isFiniteNumber(raw.seed) ? raw.seed : null,
    speculation: readSpeculation(raw.speculation),
    frequencyPenalty: num('frequencyPenalty'),
    presencePenalty: num('presencePenalty'),
    repetitionPenalty: num('repetitionPenalty'),
    logitBias: text('logitBias'),
    responseFormat: RESPONSE_FORMAT_KINDS.includes(raw.responseFormat as ResponseFormatKind) ? (raw.responseFormat as ResponseFormatKind) : 'text',
    jsonSchema: text('jsonSchema'),
    logprobs: Number.isInteger(logprobs) && (logprobs as number) >= 0 && (logprobs as number) <= MAX_TOP_LOGPROBS ? (logprobs as number) : null,
  };
}

/** The pane's settings line beyond sampling: ' · JSON schema · logprobs (top 5) · penalties'. */
export function formatSummary(s: SessionSettings): string {
  const parts: string[] = [];
  if (s.responseFormat === 'json_object') parts.push('JSON object');
  if (s.responseFormat === 'json_schema') parts.push('JSON schema');
  if (s.logprobs !== null) parts.push(`logprobs (top ${s.logprobs})`);
  if (s.frequencyPenalty !== 0 || s.presencePenalty !== 0 || s.repetitionPenalty !== 1) parts.push('penalties');
  if (s.logitBias.trim() !== '') parts.push('logit bias');
  return parts.map((p) => ` · ${p}`).join('');
}
