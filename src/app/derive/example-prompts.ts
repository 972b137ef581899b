// One-click prompts the embedded model answers well (find a code in a long text), built by the
// NIAH protocol (src/protocol/niah.ts), and what it does and does not do, in words for people.
import { makeNiahCase, seededRandom } from '../../protocol/niah';
import { NIAH_SETTINGS } from './niah-plan';
import type { SessionSettings } from './session-settings';

/** The embedded model's name starts with this (public/models/cohort-tiny). */
export const EMBEDDED_MODEL_PREFIX = 'cohort-tiny';

export const EMBEDDED_MODEL_SKILLS =
  'cohort-tiny is a 0.85M-parameter model trained only for needle-in-a-haystack recall: it finds a secret code in a long text. It cannot chat ("Hello" gives "666…"); load a Hugging Face model for that.';

export interface ExamplePrompt {
  id: string;
  label: string;
  /** Approximate prompt length in tokens (the embedded tokenizer is byte-level). */
  tokens: number;
  depth: number;
}

export const EXAMPLE_PROMPTS: readonly ExamplePrompt[] = [
  { id: 'niah-short', label: 'Find the code in a short text', tokens: 500, depth: 0.5 },
  { id: 'niah-long', label: 'Find the code in a long text', tokens: 1200, depth: 0.25 },
];

/** Greedy and short, as the model was trained to answer. */
export const EXAMPLE_SETTINGS: SessionSettings = NIAH_SETTINGS;

/** The prompt text and the code it hides; seed picks the code so each click differs. */
export function buildExample(example: ExamplePrompt, seed: number): { prompt: string; code: string } {
  const c = makeNiahCase(seededRandom(seed), example.tokens, example.depth);
  return { prompt: c.prompt, code: c.code };
}

export function isEmbeddedModel(name: string | undefined): boolean {
  return !!name && name.startsWith(EMBEDDED_MODEL_PREFIX);
}
