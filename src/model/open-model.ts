// Opens a whole model (weights, tokenizer, chat template) from a Hugging Face folder or a GGUF
// file, whatever the bytes come from (URL, dropped files, memory). Not a parser: it composes them.
import type { ChatTemplate, Tokenizer } from '../engine/types';
import { readJson, type ByteSource, type FileOpener, type ProgressCallback } from './byte-source';
import { chatTemplateFromGguf, chatTemplateFromTokenizerConfig, type JinjaChatTemplate } from './chat-template';
import type { ModelDesc } from './desc';
import { ModelFormatError } from './errors';
import { loadGgufModel } from './gguf-loader';
import { tokenizerFromGguf } from './gguf-vocab';
import { loadHfModel } from './hf-loader';
import { HfTokenizer, type JsonObject } from './tokenizer';
import { checkTokenizerJsonEntries } from './tokenizer-json-scan';
import { checkIdsFitEmbedding } from './vocab-limits';

/** tokenizer.json of a large vocabulary runs to tens of MB; anything far beyond is not one. */
const MAX_TOKENIZER_BYTES = 64 << 20;
const MAX_SMALL_JSON_BYTES = 4 << 20;

export interface OpenedModel {
  name: string;
  desc: ModelDesc;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  /** Set when the model ships no chat template and a ChatML fallback is used. */
  templateNote?: string;
}

async function optionalJson(open: FileOpener, name: string): Promise<JsonObject | null> {
  const src = await open(name);
  if (!src) return null;
  const value = await readJson(src, MAX_SMALL_JSON_BYTES);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ModelFormatError(name, 'is not a JSON object');
  return value as JsonObject;
}

/** A Hugging Face layout: config.json, *.safetensors (or a sharded index), tokenizer files. */
export async function openHfModel(open: FileOpener, name: string, onProgress?: ProgressCallback): Promise<OpenedModel> {
  const desc = await loadHfModel(open, { source: name, onProgress });
  const tokSrc = await open('tokenizer.json');
  if (!tokSrc) throw new ModelFormatError('tokenizer.json', `missing from ${name}: the model cannot be used without its tokenizer`);
  // Counted on the raw bytes: a 3.5M-entry vocabulary took 10-31 s and ~850 MB to parse before
  // the parsed tables could be refused (tools/models/tokenizer-refusal.node.ts).
  const tokenizerJson = await readJson(tokSrc, MAX_TOKENIZER_BYTES, (bytes) => checkTokenizerJsonEntries('tokenizer.json', bytes));
  if (tokenizerJson === null || typeof tokenizerJson !== 'object') throw new ModelFormatError('tokenizer.json', 'is not a JSON object');
  const tokenizerConfig = await optionalJson(open, 'tokenizer_config.json');
  const generationConfig = await optionalJson(open, 'generation_config.json');
  const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: tokenizerJson as JsonObject, tokenizerConfig, generationConfig });
  checkIdsFitEmbedding('tokenizer.json', tokenizer.idsOutside(desc.config.vocabSize), desc.config.vocabSize);
  const chatTemplate = chatTemplateFromTokenizerConfig(tokenizerConfig ?? {});
  return { name, desc, tokenizer, chatTemplate, ...noteOf(chatTemplate) };
}

/** A single GGUF file: weights, vocabulary and chat template all come from it. */
export async function openGgufModel(src: ByteSource, onProgress?: ProgressCallback): Promise<OpenedModel> {
  const { desc, header } = await loadGgufModel(src, { onProgress });
  const metadata = Object.fromEntries(header.metadata) as Record<string, unknown>;
  if (!('tokenizer.ggml.model' in metadata)) throw new ModelFormatError(src.name, 'has no tokenizer.ggml.* vocabulary');
  const tokenizer = tokenizerFromGguf(metadata);
  const chatTemplate = chatTemplateFromGguf(metadata);
  const name = typeof metadata['general.name'] === 'string' ? (metadata['general.name'] as string) : src.name;
  return { name, desc, tokenizer, chatTemplate, ...noteOf(chatTemplate) };
}

function noteOf(template: JinjaChatTemplate): { templateNote?: string } {
  return template.fallbackNote ? { templateNote: template.fallbackNote } : {};
}
