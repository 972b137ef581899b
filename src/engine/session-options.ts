// SessionOptions, the bounds of every option and the one check of them, run where a session is
// created so every host (worker, Node, library) refuses the same values. Not the UI's limits.
import { validateConstraint } from './constraints';
import { InvalidOptionError } from './errors';
import { MAX_LOGIT_BIAS, MAX_LOGIT_BIAS_ENTRIES, MAX_PENALTY, MAX_REPETITION_PENALTY, MAX_TOP_LOGPROBS } from './penalties';
import { validateSpeculation, type Speculation } from './speculation';
import { checkConversationMessage, checkTools, type ConversationMessage } from './chat-messages';
import type { SamplingParams, ToolDefinition } from './types';

export interface SessionOptions {
  systemPrompt?: string;
  sampling?: Partial<SamplingParams>;
  /** Most tokens generated per turn (default: until EOS, a stop string or the context ends it). */
  maxNewTokens?: number;
  stopStrings?: string[];
  /** Sampling seed; overrides sampling.seed. */
  seed?: number;
  /** Keep generating past EOS until maxNewTokens (benchmarks, like vLLM's ignore_eos). */
  ignoreEos?: boolean;
  /**
   * Earlier user, assistant and tool messages to continue from (a transcript restored after a
   * restart, a conversation resent with its tool calls and results).
   */
  history?: ConversationMessage[];
  /** Functions the model may call, handed to the chat template each turn (absent or empty: none). */
  tools?: ToolDefinition[];
  /**
   * Speculative decoding (default 'auto': drafted tokens verified in the batched step where the
   * step cost model says they pay; output is the same as without). See speculation.ts.
   */
  speculation?: Speculation;
  /**
   * The output expected, as token ids (OpenAI's Predicted Outputs, `prediction.content` encoded):
   * a draft source for speculation, never forced into the output. Applies to each turn.
   */
  predictionTokenIds?: number[];
  /**
   * The output expected, as text (`prediction.content` as the request gave it): encoded by the
   * model's tokenizer when the session is first sent, then as predictionTokenIds. Not with them.
   */
  predictionText?: string;
}

/** A session's sampling: greedy unless set, seeded by its number unless a seed is given. */
export function sessionSampling(options: SessionOptions, sessionNumber: number): SamplingParams {
  return {
    temperature: options.sampling?.temperature ?? 0,
    topK: options.sampling?.topK ?? 0,
    topP: options.sampling?.topP ?? 1,
    seed: options.seed ?? options.sampling?.seed ?? sessionNumber,
    ...optional(options.sampling, ['frequencyPenalty', 'presencePenalty', 'repetitionPenalty', 'logitBias', 'logprobs', 'constraint']),
  };
}

/** The fields of `sampling` among `keys` that are set (absent ones stay absent: their neutral value). */
function optional<K extends keyof SamplingParams>(sampling: Partial<SamplingParams> | undefined, keys: K[]): Partial<Pick<SamplingParams, K>> {
  const out: Partial<Pick<SamplingParams, K>> = {};
  for (const key of keys) if (sampling?.[key] !== undefined) out[key] = sampling[key];
  return out;
}

/**
 * Most tokens one turn may ask for: above any supported model's context (a turn also stops when
 * the context or KV pool runs out), so a larger value can only be a mistake.
 */
export const MAX_NEW_TOKENS = 1 << 20;
/** Hotter than this, softmax(logits / T) is uniform to within f32 rounding: no sampler needs more. */
export const MAX_TEMPERATURE = 100;
/**
 * Smallest positive temperature (0 is greedy). Far below it the GPU sampler's f32 division by T
 * meets subnormals, which GPUs may flush to zero, turning the top weight into 0/0.
 */
export const MIN_TEMPERATURE = 1e-6;
/** Above any vocabulary; the GPU sampler counts ids in f32, exact below 2^24. */
export const MAX_TOP_K = 1 << 24;
/** The sampling RNG takes 32 bits: a larger or negative seed would silently alias another. */
export const MAX_SEED = 0xffffffff;

/**
 * maxNewTokens is an integer from 1 to MAX_NEW_TOKENS. 0 is refused rather than read as "no new
 * token": a turn that generates nothing would still append an empty assistant reply to the
 * history and report finish reason 'length' for work it never did, and the scheduler would need
 * a request kind that never samples. vLLM refuses max_tokens < 1 the same way.
 */
export function checkMaxNewTokens(value: unknown): void {
  if (!(Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_NEW_TOKENS)) {
    throw new InvalidOptionError('maxNewTokens', value, `an integer from 1 to ${MAX_NEW_TOKENS}`);
  }
}

/** Throws InvalidOptionError for the first option out of bounds; absent options take defaults later. */
export function validateSessionOptions(options: SessionOptions): void {
  if (!isRecord(options)) throw new InvalidOptionError('options', options, 'an object');
  if (options.maxNewTokens !== undefined) checkMaxNewTokens(options.maxNewTokens);
  if (options.seed !== undefined) checkSeed('seed', options.seed);
  const sampling: unknown = options.sampling;
  if (sampling !== undefined) {
    if (!isRecord(sampling)) throw new InvalidOptionError('sampling', sampling, 'an object');
    const { temperature, topK, topP, seed } = sampling;
    if (temperature !== undefined && !(temperature === 0 || (isNumber(temperature) && temperature >= MIN_TEMPERATURE && temperature <= MAX_TEMPERATURE))) {
      throw new InvalidOptionError('sampling.temperature', temperature, `0 (greedy) or a number from ${MIN_TEMPERATURE} to ${MAX_TEMPERATURE}`);
    }
    if (topK !== undefined && !(Number.isInteger(topK) && (topK as number) >= 0 && (topK as number) <= MAX_TOP_K)) {
      throw new InvalidOptionError('sampling.topK', topK, `an integer from 0 (no cut) to ${MAX_TOP_K}`);
    }
    if (topP !== undefined && !(isNumber(topP) && topP > 0 && topP <= 1)) {
      throw new InvalidOptionError('sampling.topP', topP, 'a number in (0, 1] (1 = no cut)');
    }
    if (seed !== undefined) checkSeed('sampling.seed', seed);
    checkPenalties(sampling);
    if (sampling.constraint !== undefined) validateConstraint(sampling.constraint);
  }
  if (options.systemPrompt !== undefined && typeof options.systemPrompt !== 'string') {
    throw new InvalidOptionError('systemPrompt', options.systemPrompt, 'a string');
  }
  if (options.ignoreEos !== undefined && typeof options.ignoreEos !== 'boolean') {
    throw new InvalidOptionError('ignoreEos', options.ignoreEos, 'true or false');
  }
  const stopStrings: unknown = options.stopStrings;
  if (stopStrings !== undefined && !(Array.isArray(stopStrings) && stopStrings.every((s) => typeof s === 'string'))) {
    throw new InvalidOptionError('stopStrings', stopStrings, 'an array of strings');
  }
  if (options.speculation !== undefined) validateSpeculation(options.speculation);
  const prediction: unknown = options.predictionTokenIds;
  if (prediction !== undefined && !(Array.isArray(prediction) && prediction.every((id) => Number.isInteger(id) && (id as number) >= 0))) {
    throw new InvalidOptionError('predictionTokenIds', prediction, 'an array of token ids (integers >= 0)');
  }
  const predictionText: unknown = options.predictionText;
  if (predictionText !== undefined && typeof predictionText !== 'string') throw new InvalidOptionError('predictionText', predictionText, 'a string');
  if (predictionText !== undefined && prediction !== undefined) throw new InvalidOptionError('predictionText', predictionText, 'absent when predictionTokenIds is given (one prediction per session)');
  const history: unknown = options.history;
  if (history !== undefined) {
    if (!Array.isArray(history)) throw new InvalidOptionError('history', history, 'an array of messages');
    history.forEach((message: unknown, i) => checkConversationMessage(`history[${i}]`, message));
  }
  if (options.tools !== undefined) checkTools(options.tools);
}

/** Penalties, logit bias and logprobs: OpenAI's ranges, and repetitionPenalty's (vLLM's: > 0). */
function checkPenalties(sampling: Record<string, unknown>): void {
  const { frequencyPenalty, presencePenalty, repetitionPenalty, logitBias, logprobs } = sampling;
  for (const [option, value] of [['sampling.frequencyPenalty', frequencyPenalty], ['sampling.presencePenalty', presencePenalty]] as const) {
    if (value !== undefined && !(isNumber(value) && value >= -MAX_PENALTY && value <= MAX_PENALTY)) throw new InvalidOptionError(option, value, `a number from -${MAX_PENALTY} to ${MAX_PENALTY}`);
  }
  if (repetitionPenalty !== undefined && !(isNumber(repetitionPenalty) && repetitionPenalty > 0 && repetitionPenalty <= MAX_REPETITION_PENALTY)) {
    throw new InvalidOptionError('sampling.repetitionPenalty', repetitionPenalty, `a number in (0, ${MAX_REPETITION_PENALTY}] (1 = off)`);
  }
  if (logitBias !== undefined) {
    if (!isRecord(logitBias)) throw new InvalidOptionError('sampling.logitBias', logitBias, 'an object of token id -> bias');
    const entries = Object.entries(logitBias);
    if (entries.length > MAX_LOGIT_BIAS_ENTRIES) throw new InvalidOptionError('sampling.logitBias', `${entries.length} entries`, `at most ${MAX_LOGIT_BIAS_ENTRIES} entries`);
    for (const [key, value] of entries) {
      if (!/^(0|[1-9][0-9]*)$/.test(key) || Number(key) > 0xffffffff) throw new InvalidOptionError('sampling.logitBias', key, 'token ids (integers >= 0) as keys');
      if (!(isNumber(value) && value >= -MAX_LOGIT_BIAS && value <= MAX_LOGIT_BIAS)) throw new InvalidOptionError('sampling.logitBias', value, `biases from -${MAX_LOGIT_BIAS} to ${MAX_LOGIT_BIAS} (token ${key})`);
    }
  }
  if (logprobs !== undefined && !(Number.isInteger(logprobs) && (logprobs as number) >= 0 && (logprobs as number) <= MAX_TOP_LOGPROBS)) {
    throw new InvalidOptionError('sampling.logprobs', logprobs, `an integer from 0 to ${MAX_TOP_LOGPROBS} (the top alternatives returned)`);
  }
}

function checkSeed(option: string, value: unknown): void {
  if (!(Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_SEED)) {
    throw new InvalidOptionError(option, value, `an integer from 0 to ${MAX_SEED}`);
  }
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
