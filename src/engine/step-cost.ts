// StepCostModel: predicts a step's wall time from its shape (fed tokens, rows, attended positions),
// fitted online to measured step times. Arithmetic only; the policy that spends it is step-budget.ts.
import type { StepPlan } from './types';

/** What a step's cost depends on, summed over its rows. */
export interface StepShape {
  numTokens: number;
  numRows: number;
  /** Query-key pairs attention visits: sum of attendedPositions() over the rows. */
  attended: number;
}

/** predicted ms = fixedMs + perTokenMs * tokens + perRowMs * rows + perAttendedMs * attended. */
export interface StepCostCoefficients {
  fixedMs: number;
  perTokenMs: number;
  perRowMs: number;
  perAttendedMs: number;
}

/**
 * Query-key pairs of a row feeding `numTokens` tokens from `startPos`: token j attends to the
 * startPos + j + 1 positions up to its own (causal). Exact, and O(1) per row like the cheaper
 * "tokens x context" proxy, which would overcount a chunk's own triangle by up to 2x and so make
 * a first chunk look as costly as a late one.
 */
export function attendedPositions(startPos: number, numTokens: number): number {
  return numTokens * startPos + (numTokens * (numTokens + 1)) / 2;
}

const N = 4; // features: 1, tokens, rows, attended
/**
 * Weight kept by past steps of a kind (decode-only, or with a chunk) per new step of that kind:
 * ~50 steps of memory, so a device that slows is followed within a second or two. Each kind decays
 * only on its own steps: a long prompt prefilling beside decoders (every step mixed) would
 * otherwise wash the decode-only steps out of the fit, leaving the intercept free to absorb the
 * chunk's cost, and the decode-only step the budget multiplies would be overestimated (2x on the
 * SwiftShader trace in testing/recorded-join-steps.ts, which step-cost.test.ts replays).
 */
const FORGET = 0.98;
/** Steps shorter than this weigh as if they took it (relative weights would grow without bound). */
const MIN_WEIGHTED_MS = 1e-3;
/**
 * Ridge on the normalized normal equations (their diagonal is 1). It only decides directions the
 * data never varied (e.g. tokens vs rows while every row decodes one token), and is small enough
 * that information decayed by FORGET over ~1,000 steps still outweighs it.
 */
const RIDGE = 1e-9;
/** Measured steps, and steps with a multi-token row (the only ones that split per-token from per-row cost), before predictions are trusted. */
const MIN_OBSERVATIONS = 8;
const MIN_CHUNK_OBSERVATIONS = 3;
/** Decode-only steps before predictDecodeOnly() trusts their own fit over the joint one. */
const MIN_DECODE_OBSERVATIONS = 4;
/** Huber weighting: residuals beyond HUBER_K robust scales count less (a GC pause, a background tab). */
const HUBER_K = 3;
/** The robust scale never drops below this share of the prediction, so a noise-free fit can still follow a real change. */
const MIN_RELATIVE_SCALE = 0.1;
const SCALE_DECAY = 0.9;
/** Chunks this large fit any target only when tokens cost nothing: maxChunkTokens then says Infinity. */
const MAX_CHUNK_SEARCH = 2 ** 24;

export class StepCostModel {
  /** [N*N] X^T W X of both kinds of step, row-major: what solve() fits. */
  private readonly gram = new Float64Array(N * N);
  /** [N] X^T W y of both kinds of step. */
  private readonly moment = new Float64Array(N);
  /** [2, N*N] and [2, N]: each kind's decayed sums (0: decode-only steps, 1: steps with a chunk). */
  private readonly kindGram = new Float64Array(2 * N * N);
  private readonly kindMoment = new Float64Array(2 * N);
  /** [N] fitted coefficients, each >= 0 (order: fixed, per token, per row, per attended). */
  private readonly coef = new Float64Array(N);
  /** [N] the same fitted to decode-only steps alone: what predictDecodeOnly() uses. */
  private readonly decodeCoef = new Float64Array(N);
  /** [N] a step's features, kept to avoid allocating per step. */
  private readonly x = new Float64Array(N);
  private readonly scratch = fitScratch();
  private numObserved = 0;
  private numChunkObserved = 0;
  private numDecodeObserved = 0;
  private skippedWarmUp = false;
  private residualScale = 0;
  private dirty = false;
  private decodeDirty = false;

  /** Measured steps that carried a prompt chunk since the last reset. */
  get numChunkSteps(): number {
    return this.numChunkObserved;
  }

  /** Enough measured steps, some of them with prefill chunks, for predictions to size steps. */
  get calibrated(): boolean {
    return this.numObserved >= MIN_OBSERVATIONS && this.numChunkObserved >= MIN_CHUNK_OBSERVATIONS;
  }

  /** Forgets every measurement (a new runner, e.g. a re-created GPU device). */
  reset(): void {
    this.gram.fill(0);
    this.moment.fill(0);
    this.kindGram.fill(0);
    this.kindMoment.fill(0);
    this.coef.fill(0);
    this.decodeCoef.fill(0);
    this.numObserved = 0;
    this.numChunkObserved = 0;
    this.numDecodeObserved = 0;
    this.skippedWarmUp = false;
    this.residualScale = 0;
    this.dirty = false;
    this.decodeDirty = false;
  }

  /** Records one executed plan and its measured wall time. */
  observePlan(plan: StepPlan, elapsedMs: number): void {
    let numTokens = 0;
    let attended = 0;
    for (const row of plan.rows) {
      numTokens += row.tokenIds.length;
      attended += attendedPositions(row.startPos, row.tokenIds.length);
    }
    this.observe(numTokens, plan.rows.length, attended, elapsedMs);
  }

  observe(numTokens: number, numRows: number, attended: number, elapsedMs: number): void {
    if (numRows === 0 || !Number.isFinite(elapsedMs) || elapsedMs < 0) return;
    // the first step of a runner also pays for pipeline compilation and first-touch of buffers
    if (!this.skippedWarmUp) {
      this.skippedWarmUp = true;
      return;
    }
    let weight = 1;
    if (this.numObserved > 0) {
      const predicted = this.predict(numTokens, numRows, attended);
      const residual = Math.abs(elapsedMs - predicted);
      const limit = HUBER_K * Math.max(this.residualScale, MIN_RELATIVE_SCALE * predicted);
      if (this.calibrated && residual > limit) weight = limit / residual;
      this.residualScale = SCALE_DECAY * this.residualScale + (1 - SCALE_DECAY) * Math.min(residual, limit);
    }
    // relative least squares: the budget is a multiple of a step, so a 20 ms decode step's 10 ms
    // error matters as much as a 2 s chunk's 1 s one, which plain least squares would not see
    weight /= Math.max(elapsedMs, MIN_WEIGHTED_MS) ** 2;
    const x = this.x;
    x[0] = 1;
    x[1] = numTokens;
    x[2] = numRows;
    x[3] = attended;
    const kind = numTokens > numRows ? 1 : 0;
    const gramAt = kind * N * N;
    const momentAt = kind * N;
    for (let i = 0; i < N; i++) {
      this.kindMoment[momentAt + i] = FORGET * this.kindMoment[momentAt + i] + weight * x[i] * elapsedMs;
      for (let j = 0; j < N; j++) this.kindGram[gramAt + i * N + j] = FORGET * this.kindGram[gramAt + i * N + j] + weight * x[i] * x[j];
    }
    for (let i = 0; i < N; i++) {
      this.moment[i] = this.kindMoment[i] + this.kindMoment[N + i];
      for (let j = 0; j < N; j++) this.gram[i * N + j] = this.kindGram[i * N + j] + this.kindGram[N * N + i * N + j];
    }
    this.numObserved++;
    if (kind === 1) this.numChunkObserved++;
    else this.numDecodeObserved++;
    this.dirty = true;
    this.decodeDirty ||= kind === 0;
  }

  predict(numTokens: number, numRows: number, attended: number): number {
    if (this.dirty) this.solve();
    return this.evaluate(this.coef, numTokens, numRows, attended);
  }

  private evaluate(c: Float64Array, numTokens: number, numRows: number, attended: number): number {
    return c[0] + c[1] * numTokens + c[2] * numRows + c[3] * attended;
  }

  predictShape(shape: StepShape): number {
    return this.predict(shape.numTokens, shape.numRows, shape.attended);
  }

  /**
   * A decode-only step's cost (the step a budget's multiple multiplies), from the decode-only steps
   * alone once there are MIN_DECODE_OBSERVATIONS of them: the joint fit is a compromise between
   * both kinds, and through a long join (every step mixed) it leans toward the mixed steps, so the
   * budget would multiply an inflated decode step (step-cost.test.ts builds such a device).
   */
  predictDecodeOnly(shape: StepShape): number {
    if (this.numDecodeObserved < MIN_DECODE_OBSERVATIONS) return this.predictShape(shape);
    if (this.decodeDirty) {
      this.decodeDirty = false;
      fitNonNegative(this.kindGram.subarray(0, N * N), this.kindMoment.subarray(0, N), this.decodeCoef, this.scratch);
    }
    return this.evaluate(this.decodeCoef, shape.numTokens, shape.numRows, shape.attended);
  }

  coefficients(): StepCostCoefficients {
    if (this.dirty) this.solve();
    const c = this.coef;
    return { fixedMs: c[0], perTokenMs: c[1], perRowMs: c[2], perAttendedMs: c[3] };
  }

  /**
   * Most tokens one more row, starting at `startPos`, may feed so that the step `base` plus that
   * row is predicted to cost at most `targetMs` (0 when even an empty row would not fit).
   */
  maxChunkTokens(base: StepShape, startPos: number, targetMs: number): number {
    const cost = (n: number): number => this.predict(base.numTokens + n, base.numRows + 1, base.attended + attendedPositions(startPos, n));
    if (!(cost(0) <= targetMs)) return 0;
    // cost grows with n (every coefficient >= 0), attention's part quadratically: double, then bisect
    let fits = 0;
    let over = 1;
    while (cost(over) <= targetMs) {
      fits = over;
      over *= 2;
      if (over > MAX_CHUNK_SEARCH) return Infinity; // nothing per token costs anything: only the token budget bounds it
    }
    while (over - fits > 1) {
      const mid = Math.floor((fits + over) / 2);
      if (cost(mid) <= targetMs) fits = mid;
      else over = mid;
    }
    return fits;
  }

  private solve(): void {
    this.dirty = false;
    fitNonNegative(this.gram, this.moment, this.coef, this.scratch);
  }
}

/** Work arrays of fitNonNegative, kept by each model to avoid allocating per step. */
interface FitScratch {
  scale: Float64Array; // [N]
  sub: Float64Array; // [N*N]
  rhs: Float64Array; // [N]
  trial: Float64Array; // [N]
  support: Int32Array; // [N]
}

function fitScratch(): FitScratch {
  return { scale: new Float64Array(N), sub: new Float64Array(N * N), rhs: new Float64Array(N), trial: new Float64Array(N), support: new Int32Array(N) };
}

/**
 * Non-negative least squares on decayed normal equations (gram [N*N], moment [N]) into coef,
 * exactly: the optimum is the unconstrained fit on its own support, so try all 15 supports (fixed
 * order, deterministic) and keep the best one whose coefficients are all >= 0. Features are scaled
 * to a unit diagonal first, since attended positions run to millions while the constant is 1.
 */
function fitNonNegative(gram: Float64Array, moment: Float64Array, coef: Float64Array, w: FitScratch): void {
  const { scale, trial } = w;
  for (let i = 0; i < N; i++) scale[i] = gram[i * N + i] > 0 ? Math.sqrt(gram[i * N + i]) : 0;
  coef.fill(0);
  let best = 0; // objective of all-zero coefficients
  for (let mask = 1; mask < 1 << N; mask++) {
    let usable = true;
    for (let i = 0; i < N; i++) if (mask & (1 << i) && scale[i] === 0) usable = false;
    if (!usable || !solveSupport(gram, moment, mask, w)) continue;
    // objective (up to a constant) in scaled coordinates: z^T G z - 2 h^T z
    let objective = 0;
    for (let i = 0; i < N; i++) {
      if (!(mask & (1 << i))) continue;
      let gz = 0;
      for (let j = 0; j < N; j++) if (mask & (1 << j)) gz += (gram[i * N + j] / (scale[i] * scale[j]) + (i === j ? RIDGE : 0)) * trial[j];
      objective += trial[i] * gz - (2 * moment[i] * trial[i]) / scale[i];
    }
    if (objective < best) {
      best = objective;
      for (let i = 0; i < N; i++) coef[i] = mask & (1 << i) ? trial[i] / scale[i] : 0;
    }
  }
}

/** Solves the scaled normal equations on one support into w.trial; false if singular or any coefficient < 0. */
function solveSupport(gram: Float64Array, moment: Float64Array, mask: number, w: FitScratch): boolean {
  const { scale, sub, rhs, trial } = w;
  const idx = w.support;
  let k = 0;
  for (let i = 0; i < N; i++) if (mask & (1 << i)) idx[k++] = i;
  for (let r = 0; r < k; r++) {
    const i = idx[r];
    rhs[r] = moment[i] / scale[i];
    for (let s = 0; s < k; s++) {
      const j = idx[s];
      sub[r * N + s] = gram[i * N + j] / (scale[i] * scale[j]) + (r === s ? RIDGE : 0);
    }
  }
  // Cholesky: the scaled Gram matrix plus ridge is symmetric positive definite
  for (let r = 0; r < k; r++) {
    for (let s = 0; s <= r; s++) {
      let sum = sub[r * N + s];
      for (let t = 0; t < s; t++) sum -= sub[r * N + t] * sub[s * N + t];
      if (r === s) {
        if (!(sum > 0)) return false;
        sub[r * N + r] = Math.sqrt(sum);
      } else {
        sub[r * N + s] = sum / sub[s * N + s];
      }
    }
  }
  for (let r = 0; r < k; r++) {
    let sum = rhs[r];
    for (let t = 0; t < r; t++) sum -= sub[r * N + t] * rhs[t];
    rhs[r] = sum / sub[r * N + r];
  }
  trial.fill(0);
  for (let r = k - 1; r >= 0; r--) {
    let sum = rhs[r];
    for (let t = r + 1; t < k; t++) sum -= sub[t * N + r] * trial[idx[t]];
    const z = sum / sub[r * N + r];
    if (z < 0) return false;
    trial[idx[r]] = z;
  }
  return true;
}
