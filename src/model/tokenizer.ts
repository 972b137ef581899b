// Text <-> token ids from a Hugging Face tokenizer.json (GGUF vocabularies are converted to the
// same form), on @huggingface/tokenizers. Not the chat template, not streaming decode.

import { Tokenizer as LibTokenizer } from '@huggingface/tokenizers';
import type { ChatMessage, ChatTemplate, Tokenizer, ToolDefinition } from '../engine/types';
import { ModelFormatError } from './errors';
import { endOfGeneration } from './end-of-generation';
import { encodeChat, type PromptPiece } from './tokenizer-chat';
import { grammarVocabType, type GrammarVocabulary } from './grammar-vocab';
import { idLookup, postProcessorAddsFirst, setAsideIds, type JsonObject } from './tokenizer-lookups';
import { TokenSplitter } from './tokenizer-splitter';
import type { BpeLookups } from './sentencepiece-ranks';
import { checkVocabEntries } from './vocab-limits';

export type { JsonObject } from './tokenizer-lookups';

/** Entries of a JSON array or object (0 for anything else). */
function entryCount(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  return value !== null && typeof value === 'object' ? Object.keys(value).length : 0;
}

/**
 * The library's BPE model reads a map of token -> id and one of JSON.stringify([left, right]) -> rank,
 * built from the vocabulary object and merges list; lookups answer the same questions without them.
 * The added tokens the library put in its (empty) vocabulary are kept.
 */
function useBpeLookups(lib: LibTokenizer, lookups: BpeLookups): void {
  const model = lib.model as unknown as {
    bpe_ranks?: unknown;
    tokens_to_ids: Map<string, number>;
    vocab: string[];
    unk_token?: string | null;
    unk_token_id?: number;
  };
  if (!(model.bpe_ranks instanceof Map) || model.bpe_ranks.size !== 0 || model.tokens_to_ids.size > lib.get_added_tokens_decoder().size) {
    throw new ModelFormatError('tokenizer.json', 'BPE lookups were given for a model that is not BPE with empty vocab and merges');
  }
  const tokenIds = new Map(lookups.tokenIds);
  const vocab = lookups.tokens.slice();
  for (const [content, id] of model.tokens_to_ids) {
    tokenIds.set(content, id);
    vocab[id] = content;
  }
  model.tokens_to_ids = tokenIds;
  model.vocab = vocab;
  model.unk_token_id = model.unk_token == null ? undefined : tokenIds.get(model.unk_token);
  model.bpe_ranks = lookups.mergeRanks;
}

/** The Hugging Face files that describe a tokenizer, parsed or as text. */
export interface TokenizerFiles {
  tokenizerJson: JsonObject | string;
  tokenizerConfig?: JsonObject | string | null;
  generationConfig?: JsonObject | string | null;
}

export interface HfTokenizerOptions {
  /** Prepend BOS to chat prompts whose template did not already put it first. */
  addBosToken: boolean;
  bosTokenId: number | null;
  /** Every id that ends a generation. */
  eosTokenIds: number[];
  /** Remove spaces before punctuation when decoding (" ." -> "."); false keeps text exact. */
  cleanUpTokenizationSpaces: boolean;
  /** Added tokens to treat as special whatever the file says (llama.cpp's end-of-turn texts). */
  controlIds?: readonly number[];
  /** The model's embedding rows, when known: end ids past them are dropped (never sampled). */
  embeddingRows?: number;
  /** Added tokens past the embedding rows that nothing needs: never matched in text, never produced. */
  setAsideIds?: readonly number[];
  /** A BPE model's vocabulary and merge ranks as lookups, in place of tokenizer.json's lists (left empty). */
  bpeLookups?: BpeLookups;
}

/** An added token the model has no embedding row for. */
export interface SetAsideToken {
  id: number;
  content: string;
}

export interface DecodeOptions {
  /** Leave out special tokens such as "<|im_end|>" (default false). */
  skipSpecialTokens?: boolean;
}

interface AddedTokenInfo {
  id: number;
  content: string;
  special: boolean;
  normalized: boolean;
  lstrip: boolean;
  rstrip: boolean;
}


type Section = { text: string } | { token: AddedTokenInfo };

export function parseJsonObject(value: JsonObject | string, file: string): JsonObject {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (err) {
      throw new ModelFormatError(file, `is not valid JSON (${(err as Error).message})`);
    }
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ModelFormatError(file, 'must hold a JSON object');
  }
  return parsed as JsonObject;
}

/** tokenizer_config.json names tokens either as a string or as {content: string}. */
export function tokenContent(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as JsonObject).content === 'string') {
    return (value as JsonObject).content as string;
  }
  return null;
}

export class HfTokenizer implements Tokenizer {
  readonly eosTokenIds: number[];
  readonly bosTokenId: number | null;
  readonly addBosToken: boolean;
  /** Largest token id + 1 (the embedding rows a model needs at least). */
  readonly vocabSize: number;
  /** Added tokens past the embedding rows that nothing needs (Gemma 3's <image_soft_token>), ascending. */
  readonly setAside: SetAsideToken[] = [];
  private readonly lib: LibTokenizer;
  private readonly config: JsonObject;
  private readonly addedById = new Map<number, AddedTokenInfo>();
  private readonly addedByContent = new Map<string, AddedTokenInfo>();
  private readonly specialIds = new Set<number>();
  /** How the vocabulary's strings decode (tokenizer.json's decoder), for grammarVocabulary(). */
  private readonly vocabType: GrammarVocabulary['vocabType'];
  /** Non-special added tokens matched in raw text (normalized=false ones). */
  private readonly plainSplitter: TokenSplitter;
  /** Non-special added tokens matched after normalization (normalized=true ones). */
  private readonly normalizedSplitter: TokenSplitter;
  /** Special tokens: located only in template text, never in what a person typed. */
  private readonly specialSplitter: TokenSplitter;

  constructor(tokenizerJson: JsonObject, tokenizerConfig: JsonObject, options: HfTokenizerOptions) {
    this.config = { ...tokenizerConfig, clean_up_tokenization_spaces: options.cleanUpTokenizationSpaces };
    this.vocabType = grammarVocabType(tokenizerJson);
    try {
      this.lib = new LibTokenizer(tokenizerJson, this.config);
    } catch (err) {
      throw new ModelFormatError('tokenizer.json', `cannot be loaded (${(err as Error).message})`);
    }
    if (options.bpeLookups) useBpeLookups(this.lib, options.bpeLookups);
    const normalizedContents: string[] = [];
    const rawContents: string[] = [];
    const controlIds = new Set(options.controlIds ?? []);
    const setAsideIds = new Set(options.setAsideIds ?? []);
    for (const [id, token] of this.lib.get_added_tokens_decoder()) {
      // Set aside: kept only so that a template writing it is told apart from text and refused.
      const setAside = setAsideIds.has(id);
      if (setAside) this.setAside.push({ id, content: token.content });
      const info: AddedTokenInfo = {
        id,
        content: token.content,
        special: token.special || controlIds.has(id) || setAside,
        normalized: token.normalized,
        lstrip: token.lstrip,
        rstrip: token.rstrip,
      };
      this.addedById.set(id, info);
      this.addedByContent.set(info.content, info);
      if (info.special) {
        this.specialIds.add(id);
      } else if (info.normalized && this.lib.normalizer) {
        const normalizedContent = this.lib.normalizer(info.content);
        this.addedByContent.set(normalizedContent, info);
        normalizedContents.push(normalizedContent);
      } else {
        rawContents.push(info.content);
      }
    }
    this.plainSplitter = new TokenSplitter(rawContents);
    this.normalizedSplitter = new TokenSplitter(normalizedContents);
    this.specialSplitter = new TokenSplitter(
      [...this.addedById.values()].filter((t) => t.special).map((t) => t.content),
    );
    // Model and added tokens by id (holes included, as the library's get_vocab counts them).
    this.vocabSize = (this.lib.model as unknown as { vocab: unknown[] }).vocab.length;
    this.bosTokenId = options.bosTokenId;
    this.addBosToken = options.addBosToken && options.bosTokenId !== null;
    const rows = options.embeddingRows ?? Infinity;
    // An end id past the rows can never be sampled.
    this.eosTokenIds = [...new Set(options.eosTokenIds)].filter((id) => id < rows).sort((a, b) => a - b);
    this.setAside.sort((a, b) => a.id - b.id);
  }

  /**
   * Loads tokenizer.json with tokenizer_config.json and generation_config.json beside it, for a
   * model of `embeddingRows` rows (added tokens past them that nothing needs are set aside).
   */
  static fromFiles(files: TokenizerFiles, embeddingRows?: number): HfTokenizer {
    // The tokenizer library and the lookups below trust their input: a damaged file can fail
    // anywhere in construction or at first use. Build it and run it once here, so damage
    // surfaces at load as one typed error.
    try {
      const tokenizer = HfTokenizer.build(files, embeddingRows);
      tokenizer.decode(tokenizer.encode('Hello, world! 123'));
      return tokenizer;
    } catch (err) {
      if (err instanceof ModelFormatError) throw err;
      throw new ModelFormatError('tokenizer.json', `cannot be loaded (${(err as Error)?.message ?? String(err)})`);
    }
  }

  private static build(files: TokenizerFiles, embeddingRows?: number): HfTokenizer {
    const tokenizerJson = parseJsonObject(files.tokenizerJson, 'tokenizer.json');
    // Before the library builds its tables, which would take seconds and gigabytes.
    const model = tokenizerJson.model as JsonObject | null | undefined;
    checkVocabEntries('tokenizer.json', 'the vocabulary (model.vocab)', entryCount(model?.vocab));
    checkVocabEntries('tokenizer.json', 'model.merges', entryCount(model?.merges));
    checkVocabEntries('tokenizer.json', 'added_tokens', entryCount(tokenizerJson.added_tokens));
    const config = files.tokenizerConfig ? parseJsonObject(files.tokenizerConfig, 'tokenizer_config.json') : {};
    const generation = files.generationConfig
      ? parseJsonObject(files.generationConfig, 'generation_config.json')
      : {};
    const idOf = idLookup(tokenizerJson);
    const bosContent = tokenContent(config.bos_token);
    const bosTokenId = bosContent === null ? null : (idOf(bosContent) ?? null);
    const eosTokenIds: number[] = [];
    const genEos = generation.eos_token_id;
    for (const id of Array.isArray(genEos) ? genEos : [genEos]) {
      if (typeof id === 'number' && Number.isInteger(id)) eosTokenIds.push(id);
    }
    const eosContent = tokenContent(config.eos_token);
    const eosId = eosContent === null ? undefined : idOf(eosContent);
    if (eosId !== undefined) eosTokenIds.push(eosId);
    // The tokens llama.cpp ends on by their text (<end_of_turn>, <|im_end|>, </s>, ...), so both
    // layouts of a model stop at the same token; those that are added tokens become special.
    const ends = endOfGeneration(idOf, { eos: eosId ?? null });
    eosTokenIds.push(...ends.ids);
    const addedIds = new Set(((tokenizerJson.added_tokens ?? []) as Array<{ id?: unknown }>).map((t) => t.id));
    const addBosToken =
      typeof config.add_bos_token === 'boolean'
        ? config.add_bos_token
        : bosContent !== null && postProcessorAddsFirst(tokenizerJson.post_processor, bosContent);
    return new HfTokenizer(tokenizerJson, config, {
      addBosToken,
      bosTokenId,
      eosTokenIds,
      // Transformers' old default was true; LLM configs set it explicitly, and exact text wins.
      cleanUpTokenizationSpaces: config.clean_up_tokenization_spaces === true,
      controlIds: ends.control.filter((id) => addedIds.has(id)),
      ...(embeddingRows === undefined ? {} : { embeddingRows, setAsideIds: setAsideIds(tokenizerJson, embeddingRows, bosTokenId) }),
    });
  }

  /**
   * Each id's token as the vocabulary stores it, for a model of `rows` logits (XGrammar's
   * TokenizerInfo reads it): special tokens and ids without a token are '' (never allowed by a
   * grammar; end tokens are its stop ids instead).
   */
  grammarVocabulary(rows: number): GrammarVocabulary {
    const encoded = new Array<string>(rows).fill('');
    for (const [content, id] of this.lib.get_vocab(true)) {
      if (id < rows && !this.specialIds.has(id)) encoded[id] = content;
    }
    return { encoded, vocabType: this.vocabType, stopTokenIds: this.eosTokenIds };
  }

  /** Plain text -> ids. Special-token strings in the text stay plain text; no BOS is added. */
  encode(text: string): number[] {
    return this.encodePieces([text]);
  }

  /** A chat prompt: template-written specials as special ids, typed text always plain. */
  encodeChat(template: ChatTemplate, messages: ChatMessage[], addGenerationPrompt: boolean, tools?: readonly ToolDefinition[]): number[] {
    return encodeChat(this, template, messages, addGenerationPrompt, tools);
  }

  /**
   * Encodes a prompt whose special tokens are already known by id: text pieces are tokenized
   * as plain text (only non-special added tokens are recognized in them), numbers are emitted
   * as they are. Adjacent text pieces are joined first, so a piece boundary never changes
   * how text merges.
   */
  encodePieces(pieces: readonly PromptPiece[]): number[] {
    const sections: Section[] = [];
    let pendingText = '';
    const flushText = (): void => {
      for (const part of this.plainSplitter.split(pendingText)) {
        const token = this.addedByContent.get(part);
        sections.push(token && !token.special && !token.normalized ? { token } : { text: part });
      }
      pendingText = '';
    };
    for (const piece of pieces) {
      if (typeof piece === 'string') {
        pendingText += piece;
        continue;
      }
      flushText();
      const token = this.addedById.get(piece);
      if (!token) throw new Error(`token id ${piece} is not an added token of this tokenizer`);
      if (this.setAside.some((t) => t.id === piece)) {
        throw new Error(`the prompt needs token ${piece} "${token.content}", which the model has no embedding row for (set aside at load)`);
      }
      sections.push({ token });
    }
    flushText();
    applyStrip(sections);
    const ids: number[] = [];
    sections.forEach((section, sectionIndex) => {
      if ('token' in section) ids.push(section.token.id);
      else for (const id of this.encodeSection(section.text, sectionIndex)) ids.push(id); // no spread: a 1 MB prompt overflows the call stack
    });
    return ids;
  }

  /** Where template text puts special tokens: UTF-16 spans and ids, left to right. */
  specialSpans(text: string): Array<{ start: number; end: number; id: number }> {
    return this.specialSplitter.matches(text).map(({ start, content }) => ({
      start,
      end: start + content.length,
      id: (this.addedByContent.get(content) as AddedTokenInfo).id,
    }));
  }

  decode(ids: ArrayLike<number>, options: DecodeOptions = {}): string {
    if (ids.length === 0) return '';
    return this.lib.decode(Array.from(ids), { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  tokenToId(content: string): number | undefined {
    return this.lib.token_to_id(content);
  }

  idToToken(id: number): string | undefined {
    return this.lib.id_to_token(id);
  }

  /** Every id of this vocabulary (model and added tokens) outside [0, rows): ids with no embedding row. */
  idsOutside(rows: number): number[] {
    const outside = new Set<number>();
    const inRange = (id: number) => Number.isInteger(id) && id >= 0 && id < rows;
    // The library's vocabulary also maps `undefined` to the last hole below a sparse id: not a token.
    for (const [content, id] of this.lib.get_vocab(true)) if (typeof content === 'string' && !inRange(id)) outside.add(id);
    for (const id of this.addedById.keys()) if (!inRange(id)) outside.add(id);
    for (const { id } of this.setAside) outside.delete(id);
    return [...outside];
  }

  /** The library's own encode of a string with every added token recognized (for tests). */
  encodeRecognizingSpecials(text: string): number[] {
    return this.lib.encode(text, { add_special_tokens: false }).ids;
  }

  /** One run of text between added tokens, through normalizer, pre-tokenizer and model. */
  private encodeSection(rawText: string, sectionIndex: number): number[] {
    const lib = this.lib;
    if (rawText.length === 0) return [];
    let text = rawText;
    if (this.config.remove_space === true) text = text.trim().split(/\s+/).join(' ');
    if (this.config.do_lowercase_and_remove_accent === true) text = text.toLowerCase().replace(/\p{M}/gu, '');
    if (lib.normalizer) text = lib.normalizer(text);
    if (text.length === 0) return [];
    const model = lib.model;
    if (!model) throw new ModelFormatError('tokenizer.json', 'has no model');
    const subsections: Section[] = this.normalizedSplitter.split(text).map((part) => {
      const token = this.addedByContent.get(part);
      return token && !token.special && token.normalized ? { token } : { text: part };
    });
    applyStrip(subsections);
    const ids: number[] = [];
    for (const sub of subsections) {
      if ('token' in sub) {
        ids.push(sub.token.id);
        continue;
      }
      if (sub.text.length === 0) continue;
      const preTokens = lib.pre_tokenizer ? lib.pre_tokenizer(sub.text, { section_index: sectionIndex }) : [sub.text];
      for (const piece of model(preTokens)) {
        const id = this.addedByContent.get(piece)?.id ?? model.tokens_to_ids.get(piece) ?? model.unk_token_id;
        // No id and no unknown token: the library drops such pieces too (its ids go undefined).
        if (id === undefined) continue;
        // A model that keeps whole words (ignore_merges) could turn typed text into a special
        // token; refuse rather than let text act as a control token.
        if (this.specialIds.has(id)) {
          throw new Error(`plain text "${piece}" would become special token ${id}`);
        }
        ids.push(id);
      }
    }
    return ids;
  }
}

/** lstrip/rstrip added tokens eat the whitespace beside them, as the library does. */
function applyStrip(sections: Section[]): void {
  sections.forEach((section, i) => {
    if (!('token' in section)) return;
    const before = sections[i - 1];
    const after = sections[i + 1];
    if (section.token.lstrip && before && 'text' in before) before.text = before.text.trimEnd();
    if (section.token.rstrip && after && 'text' in after) after.text = after.text.trimStart();
  });
}
