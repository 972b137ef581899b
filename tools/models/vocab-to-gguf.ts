// A Hugging Face tokenizer.json -> GGUF tokenizer.* keys as llama.cpp's convert_hf_to_gguf writes them:
// byte-level BPE as "gpt2" (with its pre-tokenizer name), SentencePiece-style BPE (byte fallback, U+2581) as "llama". Not weights.
import { arr, bool, str, u32, type GgufValue } from './gguf-writer';

const TOKEN_NORMAL = 1;
const TOKEN_UNKNOWN = 2;
const TOKEN_CONTROL = 3;
const TOKEN_USER_DEFINED = 4;
const TOKEN_UNUSED = 5;
const TOKEN_BYTE = 6;
/** convert_hf_to_gguf's score for added tokens in SentencePiece vocabularies. */
const ADDED_TOKEN_SCORE = -1000;

export interface VocabParts {
  /** Parsed config.json (bos/eos ids when tokenizer_config.json names none). */
  config: Record<string, unknown>;
  /** Parsed tokenizer.json. */
  tokenizer: Record<string, unknown>;
  /** Parsed tokenizer_config.json, if any. */
  tokenizerConfig: Record<string, unknown> | null;
  /** The rest of a model's parts, unread here. */
  tensors?: unknown;
  name?: string;
}

interface AddedToken { id: number; content: string; special?: boolean }

interface BpeModel { type?: string; vocab?: Record<string, number>; merges?: unknown[]; byte_fallback?: boolean; unk_token?: string | null }

function tokenString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return null;
}

/** convert_hf_to_gguf's does_token_look_special: added tokens it marks control though the file says not special. */
export function looksSpecial(text: string): boolean {
  return ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(text) ||
    (text.startsWith('<|') && text.endsWith('|>')) ||
    (text.startsWith('<｜') && text.endsWith('｜>')) ||
    (text.startsWith('<unused') && text.endsWith('>'));
}

// The Hugging Face split patterns of the pre-tokenizers llama.cpp names (convert_hf_to_gguf's get_vocab_base_pre
// tells them apart by hashing a tokenization; the pattern says the same for these files).
const PRE_BY_PATTERN: Array<[RegExp, string]> = [
  [/\\p\{N\}\{1,3\}/, 'llama-bpe'],
  [/\|\\p\{N\}\|/, 'qwen2'],
];

function splitPattern(preTokenizer: unknown): string | null {
  if (!preTokenizer || typeof preTokenizer !== 'object') return null;
  const p = preTokenizer as { type?: string; pattern?: { Regex?: string }; pretokenizers?: unknown[] };
  if (p.type === 'Split' && typeof p.pattern?.Regex === 'string') return p.pattern.Regex;
  if (p.type === 'Sequence' && Array.isArray(p.pretokenizers)) {
    for (const inner of p.pretokenizers) {
      const found = splitPattern(inner);
      if (found) return found;
    }
  }
  return null;
}

/** tokenizer.ggml.pre for a byte-level BPE tokenizer.json: llama-bpe, qwen2, or llama.cpp's 'default'. */
export function preTokenizerName(tokenizer: Record<string, unknown>): string {
  const pattern = splitPattern(tokenizer.pre_tokenizer);
  if (pattern === null) return 'default';
  return PRE_BY_PATTERN.find(([re]) => re.test(pattern))?.[1] ?? 'default';
}

/** tokenizer.* keys for a tokenizer.json, `vocabSize` tokens long (the embedding rows). */
export function vocabMetadata(parts: VocabParts, vocabSize: number): Array<[string, GgufValue]> {
  const model = parts.tokenizer.model as BpeModel | undefined;
  if (!model || model.type !== 'BPE' || !model.vocab) throw new Error('tokenizer.json: only BPE tokenizers can be exported');
  const sentencePiece = model.byte_fallback === true;
  const added = (parts.tokenizer.added_tokens ?? []) as AddedToken[];
  const tokens: string[] = new Array(vocabSize);
  const types: number[] = new Array(vocabSize).fill(TOKEN_UNUSED);
  for (const [s, id] of Object.entries(model.vocab)) {
    if (id < vocabSize) {
      tokens[id] = s;
      types[id] = sentencePiece && /^<0x[0-9A-F]{2}>$/.test(s) ? TOKEN_BYTE : TOKEN_NORMAL;
    }
  }
  if (sentencePiece && typeof model.unk_token === 'string') {
    const unk = model.vocab[model.unk_token];
    if (unk !== undefined && unk < vocabSize) types[unk] = TOKEN_UNKNOWN;
  }
  const addedIds = new Set<number>();
  for (const t of added) {
    // Past the embedding rows: llama.cpp's converter drops it (Gemma 3's <image_soft_token>).
    if (t.id >= vocabSize) continue;
    addedIds.add(t.id);
    const control = t.special === true || looksSpecial(t.content);
    // convert_hf_to_gguf pre-normalizes the spaces of user-defined SentencePiece tokens.
    tokens[t.id] = control || !sentencePiece ? t.content : t.content.replaceAll('\u2581', ' ');
    types[t.id] = control ? TOKEN_CONTROL : TOKEN_USER_DEFINED;
  }
  for (let i = 0; i < vocabSize; i++) if (tokens[i] === undefined) tokens[i] = `[PAD${i}]`;
  const merges = (model.merges ?? []).map((m) => (Array.isArray(m) ? m.join(' ') : String(m)));
  const meta: Array<[string, GgufValue]> = sentencePiece
    ? [
        ['tokenizer.ggml.model', str('llama')],
        ['tokenizer.ggml.pre', str('default')],
        ['tokenizer.ggml.tokens', arr('string', tokens)],
        ['tokenizer.ggml.scores', arr('f32', sentencePieceScores(tokens, merges, addedIds))],
        ['tokenizer.ggml.token_type', arr('i32', types)],
        ['tokenizer.ggml.add_space_prefix', bool(prependsSpace(parts.tokenizer.normalizer))],
      ]
    : [
        ['tokenizer.ggml.model', str('gpt2')],
        ['tokenizer.ggml.pre', str(preTokenizerName(parts.tokenizer))],
        ['tokenizer.ggml.tokens', arr('string', tokens)],
        ['tokenizer.ggml.token_type', arr('i32', types)],
        ['tokenizer.ggml.merges', arr('string', merges)],
      ];
  meta.push(...specialIds(parts, tokens, sentencePiece));
  return meta;
}

/**
 * SentencePiece scores from BPE merges: a token formed by merge r scores -r (earlier merges
 * first, as llama.cpp's bigram queue takes the best score first); tokens no merge forms score
 * below all of them; added tokens -1000, as convert_hf_to_gguf writes them.
 */
function sentencePieceScores(tokens: string[], merges: string[], addedIds: Set<number>): number[] {
  const firstMerge = new Map<string, number>();
  merges.forEach((m, rank) => {
    const cut = m.indexOf(' ', 1);
    const joined = m.slice(0, cut) + m.slice(cut + 1);
    if (!firstMerge.has(joined)) firstMerge.set(joined, rank);
  });
  return tokens.map((t, id) => (addedIds.has(id) ? ADDED_TOKEN_SCORE : -(firstMerge.get(t) ?? merges.length)));
}

/** Whether a SentencePiece-style normalizer puts U+2581 before the text (Llama 2 does, Gemma does not). */
function prependsSpace(normalizer: unknown): boolean {
  if (!normalizer || typeof normalizer !== 'object') return false;
  const n = normalizer as { type?: string; normalizers?: unknown[] };
  if (n.type === 'Prepend') return true;
  return n.type === 'Sequence' && Array.isArray(n.normalizers) && n.normalizers.some(prependsSpace);
}

/** bos/eos/pad/unk ids, add_bos/add_eos and the chat template, from tokenizer_config.json or config.json. */
function specialIds(parts: VocabParts, tokens: string[], sentencePiece: boolean): Array<[string, GgufValue]> {
  const idOf = new Map(tokens.map((t, i) => [t, i]));
  const tc = parts.tokenizerConfig ?? {};
  const meta: Array<[string, GgufValue]> = [];
  const special = (key: string, tcKey: string, configKey: string | null): void => {
    const s = tokenString(tc[tcKey]);
    let id = s !== null ? idOf.get(s) : undefined;
    const fromConfig = configKey === null ? undefined : parts.config[configKey];
    if (id === undefined && typeof fromConfig === 'number') id = fromConfig;
    if (id === undefined && Array.isArray(fromConfig) && typeof fromConfig[0] === 'number') id = fromConfig[0];
    if (id !== undefined) meta.push([`tokenizer.ggml.${key}`, u32(id)]);
  };
  special('bos_token_id', 'bos_token', 'bos_token_id');
  special('eos_token_id', 'eos_token', 'eos_token_id');
  if (sentencePiece) special('unknown_token_id', 'unk_token', null);
  special('padding_token_id', 'pad_token', 'pad_token_id');
  if (typeof tc.add_bos_token === 'boolean') meta.push(['tokenizer.ggml.add_bos_token', bool(tc.add_bos_token)]);
  if (typeof tc.add_eos_token === 'boolean') meta.push(['tokenizer.ggml.add_eos_token', bool(tc.add_eos_token)]);
  if (typeof tc.chat_template === 'string') meta.push(['tokenizer.chat_template', str(tc.chat_template)]);
  return meta;
}
