// The merge ranks answered pair by pair for a SentencePiece vocabulary, held to the merge list written
// out in full (score order, a token's splits by left piece) on the published Llama 2 vocabulary.
import { describe, expect, it } from 'vitest';
import { vocabMetadata } from '../../tools/models/vocab-to-gguf';
import { ggufVocabToTokenizerFiles, TokenType } from './gguf-vocab';
import { sentencePieceMergeRanks, type SentencePieceVocab } from './sentencepiece-ranks';
import { publishedTokenizerFiles } from './testing/published-tokenizer-fixtures';
import { HfTokenizer } from './tokenizer';

/** Every split of a mergeable token into two mergeable pieces, best-scoring token first, then by left id. */
function mergeList(vocab: SentencePieceVocab): Array<[string, string]> {
  const order = vocab.tokens.map((_, id) => id).filter((id) => vocab.mergeable(id) && vocab.tokens[id].length > 1);
  order.sort((a, b) => vocab.scores[b] - vocab.scores[a] || a - b);
  const merges: Array<[string, string]> = [];
  for (const id of order) {
    const token = vocab.tokens[id];
    const splits: Array<{ left: number; cut: number }> = [];
    for (let cut = 1; cut < token.length; cut++) {
      const code = token.charCodeAt(cut);
      if (code >= 0xdc00 && code <= 0xdfff) continue;
      const left = vocab.idOf.get(token.slice(0, cut));
      const right = vocab.idOf.get(token.slice(cut));
      if (left === undefined || right === undefined || !vocab.mergeable(left) || !vocab.mergeable(right)) continue;
      splits.push({ left, cut });
    }
    splits.sort((x, y) => x.left - y.left);
    for (const { cut } of splits) merges.push([token.slice(0, cut), token.slice(cut)]);
  }
  return merges;
}

describe('sentencePieceMergeRanks on the published Llama 2 vocabulary', () => {
  const files = publishedTokenizerFiles('llama2');
  const metadata = Object.fromEntries(
    vocabMetadata({ config: {}, tokenizer: files.tokenizer, tokenizerConfig: files.tokenizerConfig }, 32_000).map(([key, v]) => [key, v.value]),
  );
  const tokens = metadata['tokenizer.ggml.tokens'] as string[];
  const types = metadata['tokenizer.ggml.token_type'] as number[];
  const vocab: SentencePieceVocab = {
    tokens,
    scores: metadata['tokenizer.ggml.scores'] as number[],
    idOf: new Map(tokens.map((t, id) => [t, id])),
    mergeable: (id) => types[id] === TokenType.normal || types[id] === TokenType.undefined,
  };
  const ranks = sentencePieceMergeRanks(vocab);
  const list = mergeList(vocab);

  it('ranks the written-out list in its order, whole numbers apart', () => {
    expect(list.length).toBeGreaterThan(30_000);
    let previous = -Infinity;
    for (const pair of list) {
      const rank = ranks.get(JSON.stringify(pair));
      expect(rank, pair.join(' ')).toBeDefined();
      expect((rank as number) - previous, pair.join(' ')).toBeGreaterThanOrEqual(1);
      previous = rank as number;
    }
  });

  it('has no rank for pairs the list lacks', () => {
    const listed = new Set(list.map((pair) => JSON.stringify(pair)));
    // Unlisted: pieces that form no token, a control token, an unknown piece.
    const candidates: Array<[string, string]> = [['▁the', '▁the'], ['<s>', 'a'], ['a', '<s>'], ['zzzq', 'x'], ['', '▁']];
    for (let id = 300; id < 3000; id += 37) candidates.push([tokens[id], tokens[id + 1]]);
    for (const pair of candidates) {
      const key = JSON.stringify(pair);
      expect(ranks.get(key) !== undefined, key).toBe(listed.has(key));
    }
  });

  it('tokenizes as the written-out list does', () => {
    const converted = ggufVocabToTokenizerFiles(metadata);
    const { bpeLookups: _, ...listOptions } = converted.options;
    const model = { ...(converted.tokenizerJson.model as Record<string, unknown>), vocab: Object.fromEntries(vocab.idOf), merges: list };
    const withList = new HfTokenizer({ ...converted.tokenizerJson, model }, converted.tokenizerConfig, listOptions);
    const withRanks = new HfTokenizer(converted.tokenizerJson, converted.tokenizerConfig, converted.options);
    for (const text of ['Hello world, this is a test.', ' naïve café 中文 😀 \n\n  x', 'def f(x):\n\treturn x**2', '1234567 3.14159']) {
      expect(withRanks.encode(text), text).toEqual(withList.encode(text));
    }
  });
});
