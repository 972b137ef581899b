// The merge ranks of a SentencePiece vocabulary (GGUF "llama"), answered pair by pair when the BPE
// model asks, in the order a full merge list would give. Not the tokenizer, not GGUF reading.
//
// llama.cpp merges adjacent symbols by the score of the token they form, best first; BPE over merges
// ranked that way does the same (how Hugging Face converts these vocabularies). Written out, Gemma's
// 262,144 tokens make ~515,000 merges; listing them, and the library's maps of them and of the
// vocabulary object, took over a second at load. A rank computed from the two pieces costs one sort.

/** What the BPE model reads its ranks through: JSON.stringify([left, right]) -> rank. */
export interface MergeRankLookup {
  get(key: string): number | undefined;
}

/** A BPE model's vocabulary and merges as lookups, for HfTokenizer to hand the library unlisted. */
export interface BpeLookups {
  /** [numTokens] token text by id. */
  tokens: readonly string[];
  tokenIds: ReadonlyMap<string, number>;
  mergeRanks: MergeRankLookup;
}

export interface SentencePieceVocab {
  tokens: readonly string[];
  scores: readonly number[];
  idOf: ReadonlyMap<string, number>;
  /** Whether a token takes part in merges (normal or undefined type). */
  mergeable: (id: number) => boolean;
}

/**
 * Rank of the merge left + right = (place of the merged token among mergeable tokens, best score
 * first, equal scores by id) * vocabulary size + left piece id. The same order as listing every
 * token's splits by left id, token by token, and whole numbers apart, as the library's tie-break
 * (rank + position / length) needs.
 */
export function sentencePieceMergeRanks(vocab: SentencePieceVocab): MergeRankLookup {
  const { tokens, scores, idOf } = vocab;
  const numTokens = tokens.length;
  const mergeable = new Uint8Array(numTokens);
  const order: number[] = [];
  for (let id = 0; id < numTokens; id++) {
    if (!vocab.mergeable(id)) continue;
    mergeable[id] = 1;
    if (tokens[id].length > 1) order.push(id);
  }
  order.sort((a, b) => scores[b] - scores[a] || a - b);
  const place = new Int32Array(numTokens).fill(-1);
  order.forEach((id, i) => {
    place[id] = i;
  });
  const mergeableId = (piece: string): number => {
    const id = idOf.get(piece);
    return id !== undefined && mergeable[id] === 1 ? id : -1;
  };
  return {
    get(key: string): number | undefined {
      const pair = JSON.parse(key) as [string, string];
      const left = mergeableId(pair[0]);
      if (left < 0 || mergeableId(pair[1]) < 0) return undefined;
      const merged = mergeableId(pair[0] + pair[1]);
      return merged < 0 ? undefined : place[merged] * numTokens + left;
    },
  };
}
