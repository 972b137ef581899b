// Penalties and logit bias as data: which rows have them, their bounds, and the sorted per-row
// entries (token id, output count, in prompt, bias) both runners apply. Not the arithmetic on the
// logits: src/reference/penalties.ts and shaders/penalties.wgsl, twins, do that.
import type { SamplingParams } from './types';

/** OpenAI's range for frequency_penalty and presence_penalty. */
export const MAX_PENALTY = 2;
/** OpenAI's range for a logit_bias value. */
export const MAX_LOGIT_BIAS = 100;
/** Most ids one logit_bias may name: bounds the runners' per-row entry buffers. */
export const MAX_LOGIT_BIAS_ENTRIES = 1024;
/** Largest repetition_penalty: past it every seen token is as good as banned already. */
export const MAX_REPETITION_PENALTY = 100;
/** OpenAI's limit on top_logprobs. */
export const MAX_TOP_LOGPROBS = 20;

/**
 * Whether a row's logits change before sampling: any penalty away from its neutral value or any
 * bias. Rows without pay nothing (the GPU's penalty pass runs only over the rows with).
 */
export function hasPenalties(s: SamplingParams): boolean {
  return (s.frequencyPenalty ?? 0) !== 0 || (s.presencePenalty ?? 0) !== 0 || (s.repetitionPenalty ?? 1) !== 1 || (s.logitBias !== undefined && Object.keys(s.logitBias).length > 0);
}

/** Whether a row's penalties count its tokens (any penalty on; logit_bias alone does not). */
export function countsTokens(s: SamplingParams): boolean {
  return (s.frequencyPenalty ?? 0) !== 0 || (s.presencePenalty ?? 0) !== 0 || (s.repetitionPenalty ?? 1) !== 1;
}

/**
 * f32 1 / f32(repetitionPenalty): a positive logit is multiplied by it (vLLM and llama.cpp
 * divide), computed once on the host so the GPU never divides (WGSL's division is not correctly
 * rounded, so the twin could not follow it).
 */
export function inverseRepetitionPenalty(penalty: number): number {
  return Math.fround(1 / Math.fround(penalty));
}

/** A row's entries, ascending by id, one per id whose logit changes. */
export interface PenaltyEntries {
  /** [n] token ids, ascending */
  ids: Int32Array;
  /** [n] occurrences in the output so far (drafts fed this step not included) */
  counts: Uint32Array;
  /** [n] 1 when the id occurs in the prompt */
  inPrompt: Uint8Array;
  /** [n] logit_bias of the id (0 without) */
  bias: Float32Array;
}

/**
 * Entries of a row: every id of `tokens` (prompt, then output) when a repetition penalty is on,
 * every id of the output when frequency or presence is on, every logit_bias id; ids at or past
 * `vocab` are left out (the host refuses such a logit_bias before a session exists). `tokens` may
 * be absent only where no penalty counts them (countsTokens): a row with bias alone.
 */
export function penaltyEntries(s: SamplingParams, tokens: ArrayLike<number> | undefined, numPromptTokens: number, vocab: number): PenaltyEntries {
  if (!tokens) {
    if (countsTokens(s)) throw new RangeError('a row with penalties carries no penaltyTokens');
    tokens = [];
    numPromptTokens = 0;
  }
  const counts = new Map<number, number>();
  const prompt = new Set<number>();
  const repetition = (s.repetitionPenalty ?? 1) !== 1;
  const outputPenalized = repetition || (s.frequencyPenalty ?? 0) !== 0 || (s.presencePenalty ?? 0) !== 0;
  if (repetition) for (let i = 0; i < numPromptTokens; i++) prompt.add(tokens[i]!);
  if (outputPenalized) for (let i = numPromptTokens; i < tokens.length; i++) counts.set(tokens[i]!, (counts.get(tokens[i]!) ?? 0) + 1);
  const ids = new Set<number>([...prompt, ...counts.keys()]);
  const bias = new Map<number, number>();
  for (const [key, value] of Object.entries(s.logitBias ?? {})) {
    const id = Number(key);
    if (value !== 0) {
      bias.set(id, value);
      ids.add(id);
    }
  }
  const sorted = Int32Array.from([...ids].filter((id) => id >= 0 && id < vocab)).sort();
  const out: PenaltyEntries = { ids: sorted, counts: new Uint32Array(sorted.length), inPrompt: new Uint8Array(sorted.length), bias: new Float32Array(sorted.length) };
  sorted.forEach((id, i) => {
    out.counts[i] = counts.get(id) ?? 0;
    out.inPrompt[i] = prompt.has(id) ? 1 : 0;
    out.bias[i] = bias.get(id) ?? 0;
  });
  return out;
}

/** Most entries one row may need: every id once, or every position and bias id once. */
export function maxPenaltyEntriesPerRow(vocab: number, maxPositions: number): number {
  return Math.min(vocab, maxPositions + MAX_LOGIT_BIAS_ENTRIES);
}
