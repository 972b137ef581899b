// GGUF `tokenizer.ggml.pre` names -> the regex splits llama.cpp applies before byte-level BPE,
// as a tokenizer.json pre_tokenizer. Not the vocabulary conversion itself (gguf-vocab.ts).

import type { JsonObject } from './tokenizer-lookups';

interface PreTokenizerSpec {
  /** Applied one after another; each splits the pieces the previous one left (llama.cpp order). */
  regexes: string[];
  /** Whole words already in the vocabulary skip merging (llama.cpp ignore_merges). */
  ignoreMerges: boolean;
  /** Default for add_bos when the GGUF does not say. */
  addBos: boolean;
}

// The regexes are llama.cpp's (src/llama-vocab.cpp, llm_tokenizer_bpe), which restate the
// original tokenizer.json patterns without case-insensitive groups.
const GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const LLAMA3 =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2 =
  "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const DEFAULT_SPEC: PreTokenizerSpec = {
  regexes: ['[\\p{P}\\$\\+<=>\\^~\\|]+', GPT2, '\\p{N}+', '[0-9][0-9][0-9]'],
  ignoreMerges: false,
  addBos: false,
};
const LLAMA3_SPEC: PreTokenizerSpec = { regexes: [LLAMA3], ignoreMerges: true, addBos: true };
const QWEN2_SPEC: PreTokenizerSpec = { regexes: [QWEN2], ignoreMerges: false, addBos: false };
const GPT2_SPEC: PreTokenizerSpec = { regexes: [GPT2], ignoreMerges: false, addBos: false };
const DIGITS_GPT2_SPEC: PreTokenizerSpec = { regexes: ['\\p{N}', GPT2], ignoreMerges: false, addBos: false };
const FALCON_SPEC: PreTokenizerSpec = {
  regexes: ['[\\p{P}\\$\\+<=>\\^~\\|`]+', GPT2, '[0-9][0-9][0-9]'],
  ignoreMerges: false,
  addBos: false,
};

const SPECS: Record<string, PreTokenizerSpec> = {
  default: DEFAULT_SPEC,
  llama3: LLAMA3_SPEC,
  'llama-v3': LLAMA3_SPEC,
  'llama-bpe': LLAMA3_SPEC,
  falcon3: LLAMA3_SPEC,
  dbrx: { ...LLAMA3_SPEC, ignoreMerges: false, addBos: false },
  'smaug-bpe': { ...LLAMA3_SPEC, ignoreMerges: false, addBos: false },
  qwen2: QWEN2_SPEC,
  stablelm2: QWEN2_SPEC,
  megrez: QWEN2_SPEC,
  'deepseek-r1-qwen': QWEN2_SPEC,
  'gpt-2': GPT2_SPEC,
  'phi-2': GPT2_SPEC,
  'roberta-bpe': GPT2_SPEC,
  mpt: GPT2_SPEC,
  olmo: GPT2_SPEC,
  jais: GPT2_SPEC,
  smollm: DIGITS_GPT2_SPEC,
  starcoder: DIGITS_GPT2_SPEC,
  refact: DIGITS_GPT2_SPEC,
  'command-r': DIGITS_GPT2_SPEC,
  codeshell: DIGITS_GPT2_SPEC,
  exaone: DIGITS_GPT2_SPEC,
  'minerva-7b': DIGITS_GPT2_SPEC,
  falcon: FALCON_SPEC,
};

export const SUPPORTED_PRE_TOKENIZERS: readonly string[] = Object.keys(SPECS);

/** The spec for a `tokenizer.ggml.pre` value; a missing one means llama.cpp's 'default'. */
export function preTokenizerSpec(pre: string | undefined): PreTokenizerSpec | null {
  return SPECS[pre ?? 'default'] ?? null;
}

/** Regex splits (matches kept as their own pieces), then bytes -> GPT-2 characters. */
export function byteLevelPreTokenizerJson(spec: PreTokenizerSpec): JsonObject {
  return {
    type: 'Sequence',
    pretokenizers: [
      ...spec.regexes.map((regex) => ({
        type: 'Split',
        pattern: { Regex: regex },
        behavior: 'Isolated',
        invert: false,
      })),
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    ],
  };
}
