// CPU twin of the sampling kernel: greedy, temperature, top-k and top-p over one row's logits,
// drawing from the per-position RNG. Not the logits computation and not the engine's settings.
import { sampleUniform } from '../engine/rng';
import { NON_FINITE_LOGITS, type SamplingParams } from '../engine/types';

/** Index of the largest logit; the lowest id wins ties. logits [vocab]. */
export function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/**
 * Sample the token generated at sequence position `pos` (the row's startPos + numTokens fed)
 * from logits [vocab]. The exact algorithm, which shaders/sample.wgsl mirrors:
 *
 * 0. Any logit NaN or +-Inf: return NON_FINITE_LOGITS, whatever the settings (the engine ends
 *    the turn with an error; a token drawn from such logits is noise, argmax of NaN is id 0).
 * 1. temperature <= 0, or topK == 1: return argmax (lowest id on ties). No RNG draw.
 * 2. Rank all ids by logit descending, equal logits by id ascending. All cuts and the draw walk
 *    this order.
 * 3. Weights: w_i = exp((logit_i - maxLogit) / temperature).
 * 4. top-k (topK > 0): keep the first min(topK, vocab) ranked ids.
 * 5. top-p (topP < 1): over the kept ids, total = sum w; keep the shortest ranked prefix whose
 *    running sum of w reaches topP * total (>=); always at least the first id.
 * 6. Draw: u = sampleUniform(seed, pos); target = u * sum of the kept w; walk the kept ids in
 *    rank order accumulating w and return the first id whose running sum exceeds target (>);
 *    if rounding leaves none, return the last kept id.
 * Sums run in rank order (f64 here; the GPU twin runs them in f32, so boundary cases may differ).
 */
export function sampleToken(logits: Float32Array, params: SamplingParams, pos: number): number {
  for (let i = 0; i < logits.length; i++) if (!Number.isFinite(logits[i])) return NON_FINITE_LOGITS;
  if (params.temperature <= 0 || params.topK === 1) return argmax(logits);
  const vocab = logits.length;

  // 2. ranked ids
  const ranked = Array.from({ length: vocab }, (_, i) => i);
  ranked.sort((a, b) => logits[b] - logits[a] || a - b);

  // 3. weights in rank order
  const maxLogit = logits[ranked[0]];
  let numKept = params.topK > 0 ? Math.min(params.topK, vocab) : vocab; // 4. top-k
  const weights = new Float64Array(numKept); // [numKept] in rank order
  let total = 0;
  for (let r = 0; r < numKept; r++) {
    weights[r] = Math.exp((logits[ranked[r]] - maxLogit) / params.temperature);
    total += weights[r];
  }

  // 5. top-p
  if (params.topP < 1) {
    const threshold = params.topP * total;
    let running = 0;
    let r = 0;
    for (; r < numKept; r++) {
      running += weights[r];
      if (running >= threshold) break;
    }
    numKept = Math.min(r + 1, numKept);
    total = running; // the kept prefix's sum, summed in rank order
  }

  // 6. draw
  const target = sampleUniform(params.seed, pos) * total;
  let running = 0;
  for (let r = 0; r < numKept; r++) {
    running += weights[r];
    if (running > target) return ranked[r];
  }
  return ranked[numKept - 1];
}
