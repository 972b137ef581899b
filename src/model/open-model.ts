// Opens a whole model (weights, tokenizer, chat template) from a Hugging Face folder or a GGUF
// file, whatever the bytes come from (URL, dropped files, memory). Not a parser: it composes them.
import type { ChatMessage, ChatTemplate, Tokenizer } from '../engine/types';
import { readJson, type ByteSource, type FileOpener, type ProgressCallback } from './byte-source';
import { chatTemplateFromGguf, chatTemplateFromTokenizerConfig, type JinjaChatTemplate } from './chat-template';
import type { ToolCallFormatName } from '../protocol/tool-call-format';
import { toolCallFormatOf, type ToolsRendering } from './tool-prompt';
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
  /** How tools reach the model: its template's `tools` variable, or the system-prompt rendering (tool-prompt.ts). */
  toolsRendering: ToolsRendering;
  /** The call format its replies are constrained to under tool_choice 'auto'; null: none Cohort knows, 'auto' unconstrained. */
  toolCallFormat: ToolCallFormatName | null;
  /** The tokens that end a generation, with their text, ascending by id. */
  endTokens: TokenLabel[];
  /** Added tokens past the embedding rows, set aside: never matched in text, never produced. */
  setAsideTokens: TokenLabel[];
}

export interface TokenLabel {
  id: number;
  content: string;
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
  const rows = desc.config.vocabSize;
  const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: tokenizerJson as JsonObject, tokenizerConfig, generationConfig }, rows);
  checkIdsFitEmbedding('tokenizer.json', tokenizer.idsOutside(rows), rows);
  const chatTemplate = chatTemplateFromTokenizerConfig(tokenizerConfig ?? {});
  // A set-aside token the template writes in every chat would fail every turn: refuse it now.
  checkIdsFitEmbedding('tokenizer.json', templateSetAsideIds(tokenizer, chatTemplate), rows);
  return { name, desc, tokenizer, chatTemplate, ...noteOf(chatTemplate), ...labels(tokenizer) };
}

/** A single GGUF file: weights, vocabulary and chat template all come from it. */
export async function openGgufModel(src: ByteSource, onProgress?: ProgressCallback): Promise<OpenedModel> {
  const { desc, header } = await loadGgufModel(src, { onProgress });
  const metadata = Object.fromEntries(header.metadata) as Record<string, unknown>;
  if (!('tokenizer.ggml.model' in metadata)) throw new ModelFormatError(src.name, 'has no tokenizer.ggml.* vocabulary');
  const tokenizer = tokenizerFromGguf(metadata);
  const chatTemplate = chatTemplateFromGguf(metadata);
  const name = typeof metadata['general.name'] === 'string' ? (metadata['general.name'] as string) : src.name;
  return { name, desc, tokenizer, chatTemplate, ...noteOf(chatTemplate), ...labels(tokenizer) };
}

function labels(tokenizer: HfTokenizer): Pick<OpenedModel, 'endTokens' | 'setAsideTokens'> {
  return {
    endTokens: tokenizer.eosTokenIds.map((id) => ({ id, content: tokenizer.idToToken(id) ?? '' })),
    setAsideTokens: tokenizer.setAside.map(({ id, content }) => ({ id, content })),
  };
}

/** Set-aside ids the template writes in a plain conversation (with a system message or, if it refuses one, without). */
function templateSetAsideIds(tokenizer: HfTokenizer, template: JinjaChatTemplate): number[] {
  if (tokenizer.setAside.length === 0) return [];
  const turns: ChatMessage[] = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'b' },
    { role: 'user', content: 'c' },
  ];
  for (const messages of [[{ role: 'system', content: 's' } as ChatMessage, ...turns], turns]) {
    let rendered: string;
    try {
      rendered = template.render(messages, true);
    } catch {
      continue;
    }
    const ids = new Set(tokenizer.setAside.map((t) => t.id));
    return [...new Set(tokenizer.specialSpans(rendered).map((span) => span.id).filter((id) => ids.has(id)))];
  }
  return [];
}

function noteOf(template: JinjaChatTemplate): { templateNote?: string; toolsRendering: ToolsRendering; toolCallFormat: ToolCallFormatName | null } {
  const toolsRendering = template.toolsRendering;
  return { ...(template.fallbackNote ? { templateNote: template.fallbackNote } : {}), toolsRendering, toolCallFormat: toolCallFormatOf(toolsRendering, template.source) };
}
