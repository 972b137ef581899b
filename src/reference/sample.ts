// CPU twin of the sampling kernel: greedy, temperature, top-k and top-p over one row's logits,
// drawing from the per-position RNG, with the GPU's f32 arithmetic in the GPU's order, so both
// draw the same token bit for bit. Not the logits computation and not the engine's settings.
import { sampleUniform } from '../engine/rng';
import { inverseTemperature, SAMPLE_CANDIDATE_CAP, SAMPLE_FALLBACK_LANES } from '../engine/sample-numerics';
import { NON_FINITE_LOGITS, type SamplingParams } from '../engine/types';

const f = Math.fround;

/** Index of the largest logit; the lowest id wins ties. logits [vocab]. */
export function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

const LOG2E = f(1.44269504);
const LN2_HI = f(0.693359375);
const LN2_LO = f(-2.12194440e-4);
/** 1/7! down to 1/0!, as sample.wgsl's expWeight writes them. */
const EXP_COEFFS = [1.98412698e-4, 1.38888889e-3, 8.33333333e-3, 4.16666667e-2, 1.66666667e-1, 0.5, 1.0, 1.0].map(f);

/**
 * exp(x) for x <= 0 as sample.wgsl's expWeight computes it: f32 +, -, * only (each correctly
 * rounded in WGSL and here by Math.fround) and an exact power of two; 0 below -80.
 */
export function expWeight(x: number): number {
  if (x < -80) return 0;
  const n = Math.floor(f(f(x * LOG2E) + 0.5));
  const r = f(f(x - f(n * LN2_HI)) - f(n * LN2_LO));
  let p = EXP_COEFFS[0]!;
  for (let i = 1; i < EXP_COEFFS.length; i++) p = f(f(p * r) + EXP_COEFFS[i]!);
  return f(p * 2 ** n);
}

/** Monotonic u32 image of a logit, +0 and -0 alike (sample.wgsl's logitKey). */
function logitKey(value: number, bits: Uint32Array, scratch: Float32Array): number {
  scratch[0] = value === 0 ? 0 : value;
  const b = bits[0]!;
  return b & 0x80000000 ? ~b >>> 0 : (b | 0x80000000) >>> 0;
}

/**
 * Sample the token generated at sequence position `pos` (the row's startPos + numTokens fed)
 * from logits [vocab]. The exact algorithm, which shaders/sample.wgsl computes too:
 *
 * 0. Any logit NaN or +-Inf: return NON_FINITE_LOGITS, whatever the settings (the engine ends
 *    the turn with an error; a token drawn from such logits is noise, argmax of NaN is id 0).
 * 1. scale = inverseTemperature(temperature) (f32 1 / f32 temperature, 0 when temperature <= 0);
 *    scale 0 or topK == 1: return argmax (lowest id on ties). No RNG draw.
 * 2. Rank all ids by logit descending, equal logits by id ascending. All cuts and the draw walk
 *    this order.
 * 3. Weights: w_i = expWeight(f32(f32(logit_i - maxLogit) * scale)).
 * 4. top-k: keep the first n = min(topK, vocab) ranked ids (n = vocab with topK 0).
 * When n <= SAMPLE_CANDIDATE_CAP (every f32 sum from rank 0 up, one add at a time):
 * 5. top-p (f32 topP < 1): total = sum of the kept w; keep the shortest ranked prefix whose
 *    running sum reaches f32(topP * total) (>=); always at least the first id.
 * 6. Draw: u = sampleUniform(seed, pos); target = f32(u * sum of the kept w); return the first
 *    kept id whose running sum exceeds target (>); if rounding leaves none, the last kept id.
 * Past the cap, 4-6 by bisection over the rank key instead (drawBisected): each cut keeps the
 * ids at or above the highest key whose count or mass at or above it meets the cut, the mass
 * summed over 64 strided lanes, then the lanes in order.
 */
export function sampleToken(logits: Float32Array, params: SamplingParams, pos: number): number {
  for (let i = 0; i < logits.length; i++) if (!Number.isFinite(logits[i])) return NON_FINITE_LOGITS;
  const scale = inverseTemperature(params.temperature);
  const topK = Math.max(0, Math.floor(params.topK));
  if (!(scale > 0) || topK === 1) return argmax(logits);
  const vocab = logits.length;
  const maxLogit = logits[argmax(logits)]!;
  const weight = (logit: number) => expWeight(f(f(logit - maxLogit) * scale));
  const kept = topK === 0 ? vocab : Math.min(topK, vocab);
  const u = sampleUniform(params.seed, pos);
  const topP = f(params.topP);
  if (kept > SAMPLE_CANDIDATE_CAP) return drawBisected(logits, weight, topK, topP, u);

  // 2-4: the kept ids in rank order (the GPU gathers them by radix select and sorts just those)
  const ranked = Array.from({ length: vocab }, (_, i) => i);
  ranked.sort((a, b) => logits[b]! - logits[a]! || a - b);
  const w = ranked.slice(0, kept).map((id) => weight(logits[id]!)); // [kept] in rank order
  let total = 0;
  for (let r = 0; r < kept; r++) total = f(total + w[r]!);
  let numKept = kept;
  // 5. top-p
  if (topP < 1) {
    const threshold = f(topP * total);
    let running = 0;
    let r = 0;
    for (; r < kept; r++) {
      running = f(running + w[r]!);
      if (running >= threshold) break;
    }
    numKept = Math.min(r + 1, kept);
    total = running;
  }
  // 6. draw
  const target = f(u * total);
  let running = 0;
  for (let r = 0; r < numKept; r++) {
    running = f(running + w[r]!);
    if (running > target) return ranked[r]!;
  }
  return ranked[numKept - 1]!;
}

/**
 * Steps 4-6 past the candidate cap, as sample.wgsl's fallback: three cuts in turn (top-k, top-p,
 * the draw), each the highest rank key (logitKey, vocab - 1 - id) whose count or f32 mass at or
 * above it, within the previous cut, meets the cut; returns the id of the final key.
 */
function drawBisected(logits: Float32Array, weight: (logit: number) => number, topK: number, topP: number, u: number): number {
  const vocab = logits.length;
  const scratch = new Float32Array(1);
  const bits = new Uint32Array(scratch.buffer);
  const keys = Uint32Array.from(logits, (l) => logitKey(l, bits, scratch));
  const w = Float32Array.from(logits, weight);
  const lanes = SAMPLE_FALLBACK_LANES;
  const atOrAbove = (i: number, hi: number, lo: number) => keys[i]! > hi || (keys[i] === hi && vocab - 1 - i >= lo);
  /** [count, mass] at or above (hi, lo) and the cut: per lane over strided ids, then lanes in order. */
  const above = (hi: number, lo: number, cut: [number, number]): [number, number] => {
    let count = 0;
    let mass = 0;
    for (let j = 0; j < lanes; j++) {
      let c = 0;
      let m = 0;
      for (let i = j; i < vocab; i += lanes) {
        if (atOrAbove(i, hi, lo) && atOrAbove(i, cut[0], cut[1])) {
          c = f(c + 1);
          m = f(m + w[i]!);
        }
      }
      count = f(count + c);
      mass = f(mass + m);
    }
    return [count, mass];
  };
  const idBits = 32 - Math.clz32(Math.max(vocab - 1, 1));
  const search = (kind: number, need: number, bound: number, cut: [number, number]): [number, number] => {
    const key: [number, number] = [0, 0];
    for (let b = 0; b < 32 + idBits; b++) {
      const probe: [number, number] = [key[0], key[1]];
      if (b < 32) probe[0] = (probe[0] | (1 << (31 - b))) >>> 0;
      else probe[1] = (probe[1] | (1 << (31 + idBits - b))) >>> 0;
      const [count, mass] = above(probe[0], probe[1], cut);
      const holds = kind === 0 ? count >= need : kind === 1 ? mass >= bound : mass > bound;
      if (holds) [key[0], key[1]] = probe;
    }
    return key;
  };
  let cut: [number, number] = [0, 0];
  for (let phase = 0; phase < 3; phase++) {
    const [keptCount, total] = above(0, 0, cut);
    let kind = 0;
    let need = 0;
    let bound = 0;
    let run = true;
    if (phase === 0) {
      run = topK > 0 && topK < vocab;
      need = f(topK);
    } else if (phase === 1) {
      run = topP < 1;
      kind = 1;
      bound = f(topP * total);
    } else {
      bound = f(u * total);
      kind = 2;
      if (!(total > bound)) {
        kind = 0; // rounding left no id past the draw: take the last kept id
        need = keptCount;
      }
    }
    if (run) cut = search(kind, need, bound, cut);
  }
  return vocab - 1 - cut[1];
}
