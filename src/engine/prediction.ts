// How much of a predicted output (OpenAI's Predicted Outputs) a turn's output used: the counts
// behind usage's accepted/rejected prediction tokens. Token arithmetic only; drafting from the
// prediction is drafts.ts, and whether a draft was verified does not enter these counts.

export interface PredictionUse {
  /** Tokens of the prediction. */
  numPredicted: number;
  /** Prediction tokens that appeared in the output, in order (see matchedPredictionTokens). */
  numAccepted: number;
}

/**
 * The DP below costs prediction x output cells; past this many (a 4k-token prediction against a
 * 4k-token output) only the common prefix and suffix are counted, so a turn's end never stalls the
 * step loop for long. A lower bound then, never an overcount.
 */
export const MAX_MATCH_CELLS = 1 << 24;

/**
 * Prediction tokens that appeared in the output: the length of the longest common subsequence
 * of the two, i.e. the most prediction tokens the output contains in the prediction's order (each
 * output token used once). This is OpenAI's "tokens in the prediction that appeared in the
 * completion"; the rest of the prediction (numPredicted - numAccepted) is what it calls rejected.
 * It reads the tokens alone, so it is the same whatever the engine drafted or verified (speculation
 * off, 'auto' choosing no drafts, a cut draft length): a property of prediction and output.
 * The common prefix and suffix are matched first in linear time (a good prediction is mostly
 * those), then the middle by the DP when it fits MAX_MATCH_CELLS.
 */
export function matchedPredictionTokens(prediction: readonly number[], output: readonly number[]): number {
  let prefix = 0;
  const shorter = Math.min(prediction.length, output.length);
  while (prefix < shorter && prediction[prefix] === output[prefix]) prefix++;
  let suffix = 0;
  while (suffix < shorter - prefix && prediction[prediction.length - 1 - suffix] === output[output.length - 1 - suffix]) suffix++;
  const p = prediction.slice(prefix, prediction.length - suffix);
  const o = output.slice(prefix, output.length - suffix);
  if (p.length === 0 || o.length === 0 || p.length * o.length > MAX_MATCH_CELLS) return prefix + suffix;
  // row[j] = LCS of p[0..i) and o[0..j); two rows of [o.length + 1]
  let prev = new Uint32Array(o.length + 1);
  let row = new Uint32Array(o.length + 1);
  for (let i = 1; i <= p.length; i++) {
    const token = p[i - 1];
    for (let j = 1; j <= o.length; j++) {
      row[j] = token === o[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], row[j - 1]);
    }
    [prev, row] = [row, prev];
  }
  return prefix + suffix + prev[o.length];
}

/** The prediction's use by one turn's output. */
export function predictionUse(prediction: readonly number[], output: readonly number[]): PredictionUse {
  return { numPredicted: prediction.length, numAccepted: matchedPredictionTokens(prediction, output) };
}
