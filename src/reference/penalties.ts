// CPU twin of shaders/penalties.wgsl: logit bias, then repetition, frequency and presence
// penalties on one sampled position's logits, in the kernel's f32 operations and order, so both
// runners sample the same token. Not which ids are penalized (src/engine/penalties.ts lists them).
import { inverseRepetitionPenalty, type PenaltyEntries } from '../engine/penalties';
import type { SamplingParams } from '../engine/types';

const f = Math.fround;

/**
 * One id's logit after its bias and penalties, with `count` its occurrences in the output (drafts
 * before this position included) and `inPrompt` whether the prompt holds it:
 *   l = l + bias;
 *   if (inPrompt or count > 0) l = l > 0 ? l * (1 / repetition) : l * repetition;
 *   l = l - count * frequency;
 *   if (count > 0) l = l - presence.
 * Every operation one f32 rounding; 1 / repetition is inverseRepetitionPenalty's f32.
 */
export function penalizedLogit(logit: number, count: number, inPrompt: boolean, bias: number, s: SamplingParams): number {
  const repetition = f(s.repetitionPenalty ?? 1);
  let l = f(logit + f(bias));
  if (inPrompt || count > 0) l = l > 0 ? f(l * inverseRepetitionPenalty(repetition)) : f(l * repetition);
  l = f(l - f(f(count) * f(s.frequencyPenalty ?? 0)));
  if (count > 0) l = f(l - f(s.presencePenalty ?? 0));
  return l;
}

/**
 * Applies a row's entries to `logits` [vocab] in place at a position after `drafts` (the drafted
 * tokens fed before it this step, which plain decode would already have in its output): each entry
 * with its count plus its occurrences among the drafts, then each drafted id no entry holds.
 */
export function applyPenalties(logits: Float32Array, s: SamplingParams, entries: PenaltyEntries, drafts: ArrayLike<number>): void {
  const inDrafts = (id: number) => {
    let n = 0;
    for (let d = 0; d < drafts.length; d++) if (drafts[d] === id) n++;
    return n;
  };
  const held = new Set<number>(entries.ids);
  for (let i = 0; i < entries.ids.length; i++) {
    const id = entries.ids[i]!;
    logits[id] = penalizedLogit(logits[id]!, entries.counts[i]! + inDrafts(id), entries.inPrompt[i] === 1, entries.bias[i]!, s);
  }
  for (let d = 0; d < drafts.length; d++) {
    const id = drafts[d]!;
    if (held.has(id)) continue;
    held.add(id);
    logits[id] = penalizedLogit(logits[id]!, inDrafts(id), false, 0, s);
  }
}
