// GGUF tokenizer metadata -> an equivalent tokenizer.json, loaded by the same HfTokenizer as
// Hugging Face files, following llama.cpp's reading of the keys. Not GGUF parsing itself.

import { endOfGeneration, type EndOfGeneration } from './end-of-generation';
import { ModelFormatError } from './errors';
import { byteLevelPreTokenizerJson, preTokenizerSpec, SUPPORTED_PRE_TOKENIZERS } from './gguf-vocab-pre';
import { HfTokenizer, type HfTokenizerOptions, type JsonObject } from './tokenizer';
import { sentencePieceMergeRanks } from './sentencepiece-ranks';
import { checkVocabEntries } from './vocab-limits';

const FILE = 'GGUF tokenizer metadata';

/** llama.cpp's token types (tokenizer.ggml.token_type). */
export const TokenType = {
  undefined: 0,
  normal: 1,
  unknown: 2,
  control: 3,
  userDefined: 4,
  unused: 5,
  byte: 6,
} as const;


export interface GgufTokenizerFiles {
  tokenizerJson: JsonObject;
  tokenizerConfig: JsonObject;
  options: HfTokenizerOptions;
}

interface Vocab {
  tokens: string[];
  types: number[];
  scores: number[];
  idOf: Map<string, number>;
}

/** Builds the tokenizer of a GGUF file from its metadata. */
export function tokenizerFromGguf(metadata: Record<string, unknown>): HfTokenizer {
  const files = ggufVocabToTokenizerFiles(metadata);
  return new HfTokenizer(files.tokenizerJson, files.tokenizerConfig, files.options);
}

export function ggufVocabToTokenizerFiles(metadata: Record<string, unknown>): GgufTokenizerFiles {
  const model = metadata['tokenizer.ggml.model'];
  const vocab = readVocab(metadata);
  if (model === 'gpt2') return byteLevelBpe(metadata, vocab, endsOf(metadata, vocab, null));
  if (model === 'llama') return sentencePiece(metadata, vocab, endsOf(metadata, vocab, SENTENCEPIECE_DEFAULT_EOS));
  throw new ModelFormatError(
    FILE,
    `tokenizer.ggml.model "${String(model)}" is not supported (supported: "gpt2" byte-level BPE, "llama" SentencePiece)`,
  );
}

/** gpt2: byte-level BPE; tokens are GPT-2 byte-to-unicode strings, merges are "a b" pairs. */
function byteLevelBpe(metadata: Record<string, unknown>, vocab: Vocab, ends: EndOfGeneration): GgufTokenizerFiles {
  const pre = optionalString(metadata, 'tokenizer.ggml.pre');
  const spec = preTokenizerSpec(pre);
  if (!spec) {
    throw new ModelFormatError(
      FILE,
      `tokenizer.ggml.pre "${pre}" is not supported (supported: ${SUPPORTED_PRE_TOKENIZERS.join(', ')})`,
    );
  }
  const merges = readMerges(metadata);
  const modelVocab = emptyRecord();
  vocab.tokens.forEach((token, id) => {
    // Control and user-defined tokens live only among the added tokens, out of BPE's reach.
    const type = vocab.types[id];
    if (type !== TokenType.control && type !== TokenType.userDefined) modelVocab[token] = id;
  });
  const tokenizerJson: JsonObject = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens(vocab, false),
    normalizer: null,
    pre_tokenizer: byteLevelPreTokenizerJson(spec),
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: spec.ignoreMerges,
      vocab: modelVocab,
      merges,
    },
  };
  return finish(metadata, vocab, tokenizerJson, ends, { bos: null, eos: null, addBos: spec.addBos });
}

/**
 * llama (SentencePiece): llama.cpp merges adjacent symbols by the score of the token they
 * form, best first. BPE with merges ranked by that score does the same, which is how
 * Hugging Face converts these vocabularies (SentencePieceExtractor); unknown characters fall
 * back to <0xNN> byte tokens.
 */
function sentencePiece(metadata: Record<string, unknown>, vocab: Vocab, ends: EndOfGeneration): GgufTokenizerFiles {
  const addSpacePrefix = optionalBool(metadata, 'tokenizer.ggml.add_space_prefix') ?? true;
  const hasByteTokens = vocab.types.some((t) => t === TokenType.byte);
  const unkId = optionalId(metadata, 'tokenizer.ggml.unknown_token_id') ?? vocab.types.indexOf(TokenType.unknown);
  const unkToken = unkId >= 0 && unkId < vocab.tokens.length ? vocab.tokens[unkId] : null;
  const replaceSpaces = { type: 'Replace', pattern: { String: ' ' }, content: '\u2581' };
  const decoders: JsonObject[] = [
    { type: 'Replace', pattern: { String: '\u2581' }, content: ' ' },
    { type: 'ByteFallback' },
    { type: 'Fuse' },
  ];
  // llama.cpp puts a space before text that starts the prompt or follows a special token.
  if (addSpacePrefix) decoders.push({ type: 'Strip', content: ' ', start: 1, stop: 0 });
  const tokenizerJson: JsonObject = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens(vocab, true),
    normalizer: addSpacePrefix
      ? { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '\u2581' }, replaceSpaces] }
      : replaceSpaces,
    pre_tokenizer: null,
    post_processor: null,
    decoder: { type: 'Sequence', decoders },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: unkToken,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: hasByteTokens,
      ignore_merges: false,
      // Every token, and merges ranked pair by pair, come as lookups (options.bpeLookups).
      vocab: {},
      merges: [],
    },
  };
  // llama.cpp's defaults for SentencePiece vocabularies: <s> = 1, </s> = 2, add BOS.
  const files = finish(metadata, vocab, tokenizerJson, ends, { bos: 1, eos: SENTENCEPIECE_DEFAULT_EOS, addBos: true });
  const types = vocab.types.slice();
  const mergeable = (id: number) => types[id] === TokenType.normal || types[id] === TokenType.undefined;
  files.options.bpeLookups = { tokens: vocab.tokens, tokenIds: vocab.idOf, mergeRanks: sentencePieceMergeRanks({ ...vocab, mergeable }) };
  return files;
}

/** Control/unknown tokens are special (recognized only where templates put them). */
function addedTokens(vocab: Vocab, unknownIsAdded: boolean): JsonObject[] {
  const added: JsonObject[] = [];
  vocab.tokens.forEach((content, id) => {
    const type = vocab.types[id];
    const special = type === TokenType.control || (unknownIsAdded && type === TokenType.unknown);
    if (!special && type !== TokenType.userDefined) return;
    added.push({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special });
  });
  return added;
}

const SENTENCEPIECE_DEFAULT_EOS = 2;

/** An id key of the file when it names a token of the vocabulary, else `fallback` (llama.cpp's reading). */
function vocabId(metadata: Record<string, unknown>, vocab: Vocab, key: string, fallback: number | null): number | null {
  const inRange = (id: number | null): boolean => id !== null && id >= 0 && id < vocab.tokens.length;
  const id = optionalId(metadata, key);
  if (inRange(id)) return id;
  return inRange(fallback) ? fallback : null;
}

/**
 * llama.cpp's end-of-generation list, and the token types it overrides for it: its known
 * end-of-turn texts become control tokens whatever the file says (typed text then never becomes
 * them); the ones its workarounds take off the list go back to plain.
 */
function endsOf(metadata: Record<string, unknown>, vocab: Vocab, defaultEos: number | null): EndOfGeneration {
  const ends = endOfGeneration((text) => vocab.idOf.get(text), {
    eos: vocabId(metadata, vocab, 'tokenizer.ggml.eos_token_id', defaultEos),
    eot: vocabId(metadata, vocab, 'tokenizer.ggml.eot_token_id', null),
    eom: vocabId(metadata, vocab, 'tokenizer.ggml.eom_token_id', null),
  });
  // A normal token stays one for tokenization (llama.cpp's merges reach it too: Qwen's "</s>").
  for (const id of ends.control) if (vocab.types[id] !== TokenType.normal && vocab.types[id] !== TokenType.undefined) vocab.types[id] = TokenType.control;
  for (const id of ends.demoted) vocab.types[id] = vocab.tokens[id] === '<|end|>' ? TokenType.userDefined : TokenType.normal;
  return ends;
}

function finish(
  metadata: Record<string, unknown>,
  vocab: Vocab,
  tokenizerJson: JsonObject,
  ends: EndOfGeneration,
  defaults: { bos: number | null; eos: number | null; addBos: boolean },
): GgufTokenizerFiles {
  const bosTokenId = vocabId(metadata, vocab, 'tokenizer.ggml.bos_token_id', defaults.bos);
  const eosId = vocabId(metadata, vocab, 'tokenizer.ggml.eos_token_id', defaults.eos);
  const eosTokenIds = ends.ids;
  const tokenizerConfig: JsonObject = {
    bos_token: bosTokenId === null ? null : vocab.tokens[bosTokenId],
    eos_token: eosId === null ? null : vocab.tokens[eosId],
    // llama.cpp's token-by-token output never tidies spaces; streamed and whole text agree.
    clean_up_tokenization_spaces: false,
  };
  return {
    tokenizerJson,
    tokenizerConfig,
    options: {
      addBosToken: (optionalBool(metadata, 'tokenizer.ggml.add_bos_token') ?? defaults.addBos) && bosTokenId !== null,
      bosTokenId,
      eosTokenIds,
      cleanUpTokenizationSpaces: false,
    },
  };
}

/** No prototype: a token spelled "__proto__" must stay an ordinary key. */
function emptyRecord(): Record<string, number> {
  return Object.create(null) as Record<string, number>;
}

function readVocab(metadata: Record<string, unknown>): Vocab {
  const tokens = metadata['tokenizer.ggml.tokens'];
  if (Array.isArray(tokens)) checkVocabEntries(FILE, 'tokenizer.ggml.tokens', tokens.length);
  if (!Array.isArray(tokens) || tokens.length === 0 || !tokens.every((t) => typeof t === 'string')) {
    throw new ModelFormatError(FILE, 'tokenizer.ggml.tokens must be a non-empty array of strings');
  }
  const numTokens = tokens.length;
  const types = numberArray(metadata, 'tokenizer.ggml.token_type', numTokens) ?? new Array<number>(numTokens).fill(TokenType.normal);
  const scores = numberArray(metadata, 'tokenizer.ggml.scores', numTokens) ?? new Array<number>(numTokens).fill(0);
  const idOf = new Map<string, number>();
  (tokens as string[]).forEach((token, id) => {
    if (idOf.has(token)) throw new ModelFormatError(FILE, `token "${token}" appears twice (ids ${idOf.get(token)} and ${id})`);
    idOf.set(token, id);
  });
  return { tokens: tokens as string[], types, scores, idOf };
}

function readMerges(metadata: Record<string, unknown>): Array<[string, string]> {
  const raw = metadata['tokenizer.ggml.merges'];
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new ModelFormatError(FILE, 'tokenizer.ggml.merges must be an array of strings');
  checkVocabEntries(FILE, 'tokenizer.ggml.merges', raw.length);
  return raw.map((merge, i) => {
    // llama.cpp splits at the first space after the first character.
    const cut = typeof merge === 'string' ? merge.indexOf(' ', 1) : -1;
    if (cut < 0) throw new ModelFormatError(FILE, `merge ${i} is not "left right"`);
    return [(merge as string).slice(0, cut), (merge as string).slice(cut + 1)];
  });
}

function numberArray(metadata: Record<string, unknown>, key: string, length: number): number[] | null {
  const raw = metadata[key];
  if (raw === undefined) return null;
  const isArrayLike = Array.isArray(raw) || ArrayBuffer.isView(raw);
  const values = isArrayLike ? Array.from(raw as ArrayLike<number | bigint>, Number) : null;
  if (!values || values.length !== length || values.some((v) => Number.isNaN(v))) {
    throw new ModelFormatError(FILE, `${key} must hold ${length} numbers, one per token`);
  }
  return values;
}

function optionalId(metadata: Record<string, unknown>, key: string): number | null {
  const raw = metadata[key];
  if (raw === undefined || raw === null) return null;
  const id = typeof raw === 'bigint' ? Number(raw) : raw;
  if (typeof id !== 'number' || !Number.isInteger(id)) throw new ModelFormatError(FILE, `${key} must be an integer`);
  return id;
}

function optionalBool(metadata: Record<string, unknown>, key: string): boolean | null {
  const raw = metadata[key];
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'boolean') throw new ModelFormatError(FILE, `${key} must be a boolean`);
  return raw;
}

function optionalString(metadata: Record<string, unknown>, key: string): string | undefined {
  const raw = metadata[key];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw new ModelFormatError(FILE, `${key} must be a string`);
  return raw;
}
