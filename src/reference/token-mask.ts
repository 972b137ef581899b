// CPU twin of shaders/token_mask.wgsl: a constrained position's forbidden tokens get MASKED_LOGIT,
// before penalties and the sampler read the logits. Not which tokens are allowed: the engine's
// matchers fill StepRow.tokenBitmask (src/engine/constraints.ts).
import { MASKED_LOGIT, maskWords } from '../engine/constraints';

/**
 * Sets logits[id] = MASKED_LOGIT for every id whose bit is clear in the mask row `index` of
 * `bitmask` [rows, maskWords(vocab)]; allowed ids keep their logit bit for bit.
 */
export function applyTokenMask(logits: Float32Array, bitmask: Int32Array, index: number): void {
  const vocab = logits.length;
  const base = index * maskWords(vocab);
  for (let id = 0; id < vocab; id++) {
    if (((bitmask[base + (id >>> 5)]! >>> (id & 31)) & 1) === 0) logits[id] = MASKED_LOGIT;
  }
}
