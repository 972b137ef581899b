// Small vocabularies with known token ids for the tokenizer tests: the default model's
// byte-level files, a GPT-2 style BPE with merges, a SentencePiece vocabulary. Test data only.

import { readFileSync } from 'node:fs';
import type { JsonObject } from '../tokenizer';

export function readFixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

/** The default model's tokenizer.json and tokenizer_config.json (from tools/train/vocab.py). */
export function byteLevelFiles(): { tokenizerJson: JsonObject; tokenizerConfig: JsonObject } {
  return {
    tokenizerJson: JSON.parse(readFixture('byte-level/tokenizer.json')) as JsonObject,
    tokenizerConfig: JSON.parse(readFixture('byte-level/tokenizer_config.json')) as JsonObject,
  };
}

/** GPT-2's byte -> printable character table, written out independently of any library. */
export function gpt2ByteChars(): string[] {
  const printable: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const chars = new Array<string>(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    chars[b] = printable.includes(b) ? String.fromCharCode(b) : String.fromCharCode(next++);
  }
  return chars;
}

/** The default model's vocabulary as a GGUF writer would store it. */
export function byteLevelGguf(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const { tokenizerJson, tokenizerConfig } = byteLevelFiles();
  const vocab = (tokenizerJson.model as { vocab: Record<string, number> }).vocab;
  const tokens = Object.entries(vocab)
    .sort((a, b) => a[1] - b[1])
    .map(([token]) => token);
  return {
    'tokenizer.ggml.model': 'gpt2',
    'tokenizer.ggml.pre': 'default',
    'tokenizer.ggml.tokens': tokens,
    'tokenizer.ggml.token_type': tokens.map((_, id) => (id < 256 ? 1 : 3)),
    'tokenizer.ggml.merges': [],
    'tokenizer.ggml.bos_token_id': 256,
    'tokenizer.ggml.eos_token_id': 258,
    'tokenizer.ggml.add_bos_token': false,
    'tokenizer.chat_template': tokenizerConfig.chat_template,
    ...overrides,
  };
}

/**
 * Byte tokens 0..255, then merged tokens with these ids:
 * 256 he, 257 ll, 258 hell, 259 hello, 260 Ġw, 261 Ġwo, 262 12, 263 34, 264 123, 265 45,
 * 266 xyz (no merge makes it), 267 <|endoftext|> (control), 268 <think> (user-defined),
 * 269 ĠĠ, 270 ĊĊ, 271 's, 272 ,Ġ. The merge order makes digit runs, whitespace runs and
 * punctuation tokenize differently under each pre-tokenizer.
 */
export const SMALL_BPE_MERGES = [
  'h e', 'l l', 'he ll', 'hell o', 'Ġ w', 'Ġw o', '1 2', '3 4', '12 3', '4 5', 'Ġ Ġ', 'Ċ Ċ', "' s", ', Ġ',
];

export function smallBpeGguf(pre: string | undefined, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const tokens = [
    ...gpt2ByteChars(), 'he', 'll', 'hell', 'hello', 'Ġw', 'Ġwo', '12', '34', '123', '45', 'xyz', '<|endoftext|>', '<think>',
    'ĠĠ', 'ĊĊ', "'s", ',Ġ',
  ];
  const types = tokens.map((_, id) => (id === 267 ? 3 : id === 268 ? 4 : 1));
  const metadata: Record<string, unknown> = {
    'tokenizer.ggml.model': 'gpt2',
    'tokenizer.ggml.tokens': tokens,
    'tokenizer.ggml.token_type': types,
    'tokenizer.ggml.merges': SMALL_BPE_MERGES,
    'tokenizer.ggml.bos_token_id': 267,
    'tokenizer.ggml.eos_token_id': 267,
    ...overrides,
  };
  if (pre !== undefined) metadata['tokenizer.ggml.pre'] = pre;
  return metadata;
}

/** The same vocabulary as a Hugging Face GPT-2 style tokenizer.json (ByteLevel with its regex). */
export function smallBpeTokenizerJson(): JsonObject {
  const gguf = smallBpeGguf('gpt-2');
  const tokens = gguf['tokenizer.ggml.tokens'] as string[];
  const vocab: Record<string, number> = {};
  tokens.forEach((t, id) => {
    if (id !== 267 && id !== 268) vocab[t] = id;
  });
  const added = (id: number, special: boolean): JsonObject => ({
    id,
    content: tokens[id],
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special,
  });
  return {
    version: '1.0',
    added_tokens: [added(267, true), added(268, false)],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', vocab, merges: SMALL_BPE_MERGES, ignore_merges: false, byte_fallback: false },
  };
}

/**
 * SentencePiece-style vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then
 * 259 ▁, 260 h, 261 e, 262 l, 263 o, 264 w, 265 r, 266 d, 267 he, 268 ll, 269 ▁he, 270 llo,
 * 271 ▁hello, 272 ▁w, 273 or, 274 ▁wor, 275 ld, 276 wo, 277 ow. Higher score merges first, so
 * "owo" is o + wo, never ow + o.
 */
export function smallSpmGguf(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  const scores = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
    scores.push(0);
  }
  const pieces: Array<[string, number]> = [
    ['\u2581', -1000], ['h', -1000], ['e', -1000], ['l', -1000], ['o', -1000], ['w', -1000], ['r', -1000], ['d', -1000],
    ['he', -1], ['ll', -2], ['\u2581he', -3], ['llo', -4], ['\u2581hello', -5], ['\u2581w', -6], ['or', -7],
    ['\u2581wor', -8], ['ld', -9], ['wo', -20], ['ow', -21],
  ];
  for (const [piece, score] of pieces) {
    tokens.push(piece);
    types.push(1);
    scores.push(score);
  }
  return {
    'tokenizer.ggml.model': 'llama',
    'tokenizer.ggml.tokens': tokens,
    'tokenizer.ggml.token_type': types,
    'tokenizer.ggml.scores': scores,
    'tokenizer.ggml.bos_token_id': 1,
    'tokenizer.ggml.eos_token_id': 2,
    'tokenizer.ggml.unknown_token_id': 0,
    'tokenizer.ggml.add_bos_token': true,
    ...overrides,
  };
}

/** Byte-fallback token id of byte b in smallSpmGguf. */
export function spmByteId(b: number): number {
  return 3 + b;
}
