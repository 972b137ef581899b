// What a grammar engine needs of a tokenizer: each id's token as stored, how those strings decode
// (byte-level BPE, SentencePiece with byte fallback, or plain) and the stop ids. Not the grammar
// engine itself (xgrammar.ts) and not encoding or decoding text (tokenizer.ts).
import type { JsonObject } from './tokenizer-lookups';

export interface GrammarVocabulary {
  /** [rows] each id's token string as tokenizer.json stores it; '' for special or absent ids. */
  encoded: string[];
  /** XGrammar's names: 'byte_level' (GPT-2 byte map), 'byte_fallback' (<0xNN>, ▁ for space), 'raw'. */
  vocabType: 'byte_level' | 'byte_fallback' | 'raw';
  /** Ids that end a reply: allowed only where the grammar can end. */
  stopTokenIds: number[];
}

/** The vocabulary type tokenizer.json's decoder implies (a Sequence is searched in order). */
export function grammarVocabType(tokenizerJson: JsonObject): GrammarVocabulary['vocabType'] {
  const types: string[] = [];
  const walk = (d: unknown): void => {
    if (typeof d !== 'object' || d === null) return;
    const node = d as { type?: unknown; decoders?: unknown };
    if (typeof node.type === 'string') types.push(node.type);
    if (Array.isArray(node.decoders)) node.decoders.forEach(walk);
  };
  walk(tokenizerJson.decoder);
  if (types.includes('ByteLevel')) return 'byte_level';
  // SentencePiece: '▁' for a space (Metaspace, or a Replace of it), <0xNN> pieces with ByteFallback
  if (types.includes('ByteFallback') || types.includes('Metaspace') || types.includes('Replace')) return 'byte_fallback';
  return 'raw';
}
