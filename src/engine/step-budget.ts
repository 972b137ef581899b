// The step-time budget: how long one step may take (a multiple of the decode-only step, an absolute
// ceiling, or both), its bounds and its check. Policy only: the fit is step-cost.ts, the sizing scheduler.ts.
import { InvalidOptionError } from './errors';

/**
 * A step carrying prefill is predicted to cost at most `multiple` x the step its decode rows
 * alone would make, and at most `maxStepMs`; the lesser binds. `multiple` applies only to steps
 * with decode rows (with none, nobody waits on the step but new arrivals and cancels, which
 * `maxStepMs` bounds). null turns the budget off: only the token budget sizes chunks.
 */
export interface StepBudget {
  multiple?: number;
  maxStepMs?: number;
}

/**
 * 1.5x the decode step: a decoder's token gap grows by at most half while a prompt prefills beside
 * it. Not 2x: a decode step alone can take several times its median on a busy machine (the join
 * benchmark's control run shows how much), so a 2x step plus one such spike leaves no room under
 * the 3x aimed for. The price: beside long-running decoders a prompt prefills at about half the
 * rate 2x would give.
 */
export const DEFAULT_STEP_BUDGET: Readonly<StepBudget> = Object.freeze({ multiple: 1.5 });
/** Below 1 not even the decode rows alone would fit. */
export const MIN_STEP_MULTIPLE = 1;
/** Beyond this a multiple no longer protects decoders: null (off) says that plainly. */
export const MAX_STEP_MULTIPLE = 1000;
/** A ceiling above a minute is not a budget (and is likely seconds mistaken for ms): null turns it off. */
export const MAX_STEP_MS = 60_000;
/**
 * Prompt tokens the first prefill chunk of a step always gets, even past the target, so a prompt
 * makes progress on a device where a single token costs more than the headroom. One: a larger
 * floor overrides the budget exactly where it matters (on SwiftShader 16 tokens at position
 * ~1,000 cost 3-5x a decode step), and a waiting prompt still advances every step.
 */
export const MIN_PREFILL_TOKENS = 1;
/**
 * Prompt tokens per step, all chunks together, while the cost model is still calibrating: this
 * many in its first chunk step, then halved per chunk step seen (32, 16, 8), so the calibrating
 * steps differ in fed tokens and the fit can tell per-token cost from per-row cost.
 */
export const UNCALIBRATED_PREFILL_TOKENS = 32;

/** The calibration chunk size after `numChunkSteps` measured steps with a chunk. */
export function uncalibratedPrefillTokens(numChunkSteps: number): number {
  return UNCALIBRATED_PREFILL_TOKENS >> Math.min(numChunkSteps, 2);
}

/** Checks a budget from the API; returns a fresh copy (or null = off). Throws InvalidOptionError naming the option. */
export function validateStepBudget(value: unknown): StepBudget | null {
  if (value === null) return null;
  if (typeof value !== 'object' || value === undefined || Array.isArray(value)) {
    throw new InvalidOptionError('stepBudget', value, 'an object with multiple and/or maxStepMs, or null (off)');
  }
  const { multiple, maxStepMs } = value as Record<string, unknown>;
  if (multiple === undefined && maxStepMs === undefined) {
    throw new InvalidOptionError('stepBudget', value, 'an object with multiple and/or maxStepMs, or null (off)');
  }
  const budget: StepBudget = {};
  if (multiple !== undefined) {
    if (!(typeof multiple === 'number' && multiple >= MIN_STEP_MULTIPLE && multiple <= MAX_STEP_MULTIPLE)) {
      throw new InvalidOptionError('stepBudget.multiple', multiple, `a number from ${MIN_STEP_MULTIPLE} to ${MAX_STEP_MULTIPLE}`);
    }
    budget.multiple = multiple;
  }
  if (maxStepMs !== undefined) {
    if (!(typeof maxStepMs === 'number' && maxStepMs > 0 && maxStepMs <= MAX_STEP_MS)) {
      throw new InvalidOptionError('stepBudget.maxStepMs', maxStepMs, `a number of ms above 0 and at most ${MAX_STEP_MS}`);
    }
    budget.maxStepMs = maxStepMs;
  }
  return budget;
}

/**
 * The most a step may cost under `budget`, in ms: Infinity when nothing bounds it by time, NaN
 * when a bound applies but `decodeOnlyMs` is unknown (the model is calibrating).
 */
export function stepTargetMs(budget: StepBudget, numDecodeRows: number, decodeOnlyMs: number | undefined): number {
  let target = budget.maxStepMs ?? Infinity;
  if (budget.multiple !== undefined && numDecodeRows > 0) {
    target = decodeOnlyMs === undefined ? NaN : Math.min(target, budget.multiple * decodeOnlyMs);
  }
  return target;
}
