// Draft proposers for speculative decoding without a second model: prompt lookup (the request's
// own prompt and output) and an explicit prediction of the output; stateless functions of token ids.
// Which rows speculate and how far is speculation.ts, verifying them verify.ts.

/** Longest and shortest suffix matched against earlier tokens (vLLM's prompt_lookup_max/min). */
export const MAX_NGRAM = 3;
export const MIN_NGRAM = 1;

/**
 * Up to `maxDrafts` tokens that followed an earlier occurrence, in `haystack`, of the last n tokens
 * of `sequence` (n from MAX_NGRAM down to MIN_NGRAM: the longest suffix that matches wins).
 * `haystack` may be `sequence` itself (prompt lookup): then a match must end before the suffix
 * does, so its continuation is known. Which occurrence: without `near`, the latest, as llama.cpp's
 * lookup takes (nearby text predicts what follows better than the prompt's first use of a phrase);
 * with `near`, the one whose continuation starts closest to that index of the haystack (a
 * prediction: where the output has got to in it, so a repeated line drafts its own next line).
 */
export function lookupDrafts(sequence: readonly number[], haystack: readonly number[], maxDrafts: number, near?: number): number[] {
  if (maxDrafts <= 0) return [];
  const self = haystack === sequence;
  for (let n = Math.min(MAX_NGRAM, sequence.length); n >= MIN_NGRAM; n--) {
    const suffixAt = sequence.length - n;
    let best = -1;
    // a match at i is followed by haystack[i + n]; in the sequence itself that must precede the end
    for (let i = (self ? sequence.length - 1 : haystack.length) - n; i >= 0; i--) {
      let j = 0;
      while (j < n && haystack[i + j] === sequence[suffixAt + j]) j++;
      if (j !== n || i + n >= haystack.length) continue;
      if (near === undefined) {
        best = i;
        break;
      }
      if (best < 0 || Math.abs(i + n - near) < Math.abs(best + n - near)) best = i;
    }
    if (best >= 0) return haystack.slice(best + n, Math.min(best + n + maxDrafts, haystack.length));
  }
  return [];
}

/**
 * Drafts for a request whose prompt and output so far are `tokenIds` (the first `numPromptTokens`
 * the prompt), up to `maxDrafts`: from the prediction first (OpenAI's Predicted Outputs), aligned
 * while the output still equals its start, else its continuation after the output's last tokens
 * found in it (the occurrence nearest the output's length: edits shift an output against its
 * prediction by a little, not to another copy of a repeated line); then prompt lookup.
 */
export function proposeDrafts(tokenIds: readonly number[], numPromptTokens: number, prediction: readonly number[] | undefined, maxDrafts: number): number[] {
  if (maxDrafts <= 0) return [];
  if (prediction && prediction.length > 0) {
    const numOutput = tokenIds.length - numPromptTokens;
    let aligned = numOutput < prediction.length;
    for (let i = 0; aligned && i < numOutput; i++) aligned = tokenIds[numPromptTokens + i] === prediction[i];
    if (aligned) return prediction.slice(numOutput, numOutput + maxDrafts);
    const found = lookupDrafts(tokenIds, prediction, maxDrafts, numOutput);
    if (found.length > 0) return found;
  }
  return lookupDrafts(tokenIds, tokenIds, maxDrafts);
}
