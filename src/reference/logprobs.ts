// CPU twin of the log-probabilities sample.wgsl's finish reports: of the processed distribution
// (logits after bias and penalties, scaled by the row's 1/temperature, or 1 for greedy rows,
// before the top-k / top-p cuts), in the kernel's order of sums. Not the draw (sample.ts).
import { logprobScale, SAMPLE_FALLBACK_LANES } from '../engine/sample-numerics';
import type { SampledLogprobs } from '../engine/types';
import { argmax, expWeight } from './sample';

const f = Math.fround;

/**
 * log p(tokenId) and the `numTop` most likely ids with theirs, from logits [vocab]:
 *   z_i = f32(f32(logit_i - max) * scale); total = sum of expWeight(z_i) over 64 strided lanes,
 *   then the lanes in order; log p_i = f32(z_i - f32(ln total)).
 * The top ids rank by logit, equal logits lower id first (the sampler's rank order). The GPU's
 * ln is not correctly rounded: the two agree to within a few f32 ulps of ln total, not bitwise.
 */
export function sampledLogprobs(logits: Float32Array, temperature: number, tokenId: number, numTop: number): SampledLogprobs {
  const vocab = logits.length;
  const scale = logprobScale(temperature);
  const max = logits[argmax(logits)]!;
  const z = (i: number) => f(f(logits[i]! - max) * scale);
  let total = 0;
  for (let lane = 0; lane < SAMPLE_FALLBACK_LANES; lane++) {
    let m = 0;
    for (let i = lane; i < vocab; i += SAMPLE_FALLBACK_LANES) m = f(m + expWeight(z(i)));
    total = f(total + m);
  }
  const lse = f(Math.log(total));
  const logprob = (i: number) => f(z(i) - lse);
  const n = Math.min(numTop, vocab);
  const topIds = new Int32Array(n);
  const topLogprobs = new Float32Array(n);
  // round r: the best id ranked after round r - 1's (the GPU's rounds, one pass each)
  let prev = -1;
  for (let r = 0; r < n; r++) {
    let best = -1;
    for (let i = 0; i < vocab; i++) {
      if (prev >= 0 && !ranksBefore(logits, prev, i)) continue;
      if (best < 0 || ranksBefore(logits, i, best)) best = i;
    }
    topIds[r] = best;
    topLogprobs[r] = logprob(best);
    prev = best;
  }
  return { logprob: logprob(tokenId), topIds, topLogprobs };
}

/** a's rank before b's: higher logit (+0 and -0 alike), then lower id. */
function ranksBefore(logits: Float32Array, a: number, b: number): boolean {
  const la = logits[a]!;
  const lb = logits[b]!;
  return la > lb || (la === lb && a < b);
}
