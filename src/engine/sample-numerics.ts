// The numbers the GPU sampler and its CPU twin must share to draw the same token bit for bit: the
// candidate cap that picks the sampler's path, the fallback's lane count, and 1/temperature.
// Not the sampling algorithm (src/reference/sample.ts, shaders/sample.wgsl) and not settings.

/**
 * Most ids a row may keep by rank before top-p and the draw (min(topK, vocab), or the vocab with
 * topK 0): up to this many, the sampler gathers them and walks them in rank order in one
 * workgroup; past it, the row takes the bisection fallback. sample.wgsl's CAP.
 */
export const SAMPLE_CANDIDATE_CAP = 1024;

/** Lanes of the fallback's strided mass sums: a constant, so both kernel settings sum alike. sample.wgsl's FINISH_SIZE. */
export const SAMPLE_FALLBACK_LANES = 64;

const F32_MAX = 3.4028234663852886e38;
const F32_MIN_NORMAL = 2 ** -126;

/**
 * f32 1 / f32(temperature), the weights' scale exp((logit - max) * scale), computed once on the
 * host so the GPU never divides (WGSL's division is not correctly rounded, so the twin could not
 * follow it). 0 means greedy (temperature <= 0 or NaN). Clamped to the normal f32 range: a GPU may
 * flush subnormals and a huge scale must not overflow to Infinity (0 * Infinity is NaN).
 */
export function inverseTemperature(temperature: number): number {
  const t = Math.fround(temperature);
  if (!(t > 0)) return 0;
  return Math.fround(Math.min(F32_MAX, Math.max(F32_MIN_NORMAL, Math.fround(1 / t))));
}

/**
 * The scale of the distribution log-probabilities are reported from: the sampling's own
 * (inverseTemperature) when it draws, 1 when it is greedy (the model's distribution, as at
 * temperature 1; a greedy row's draw has no temperature to apply).
 */
export function logprobScale(temperature: number): number {
  const scale = inverseTemperature(temperature);
  return scale > 0 ? scale : 1;
}
