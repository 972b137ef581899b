// The step-time budget: how long one step may take (a multiple of the decode-only step, an absolute
// ceiling, or both), its bounds, its check, and the step sizer that applies it to one step's chunks.
// Policy only: the fit is step-cost.ts; which rows ride is scheduler.ts.
import { InvalidOptionError } from './errors';
import type { StepBudgetEvent } from './events';
import type { StepCostModel, StepShape } from './step-cost';

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
 * How long one step may take: `off` (no budget, or nothing bounds this step by time: no decode
 * rows and no maxStepMs), `calibrating` (a bound applies but the cost model cannot predict yet:
 * prefill is held to the calibration chunk and no drafts ride) or `ms` (the predicted cost bound).
 */
export type StepTarget = { readonly kind: 'off' } | { readonly kind: 'calibrating' } | { readonly kind: 'ms'; readonly ms: number };

/** One step's budget as schedule() applies it: its target, each prompt chunk's limit, the event. */
export interface StepSizer {
  readonly target: StepTarget;
  /**
   * Most tokens a prompt chunk from `startPos` may feed beside what the step holds so far
   * (`scheduled()`: its shape, asked only when the cost model is needed), with `prefillTokens`
   * already given to chunks: Infinity when off; 0 when the step is full (its first chunk always
   * gets MIN_PREFILL_TOKENS).
   */
  chunkLimit(startPos: number, prefillTokens: number, scheduled: () => StepShape): number;
  /** What StepEvent.stepBudget shows for the step as scheduled (undefined while the budget is off). */
  event(scheduled: StepShape | null): StepBudgetEvent | undefined;
}

/**
 * The step sizer for one step under `budget` (null = off), from the cost model and the shape of
 * the step's decode rows (null: none). The one place the budget's target is decided.
 */
export function sizeStep(budget: StepBudget | null, cost: StepCostModel, decodes: StepShape | null): StepSizer {
  const calibrated = cost.calibrated;
  const decodeOnlyMs = budget && decodes && calibrated ? cost.predictDecodeOnly(decodes) : undefined;
  const target = stepTarget(budget, calibrated, decodes !== null, decodeOnlyMs);
  return {
    target,
    chunkLimit(startPos, prefillTokens, scheduled) {
      if (target.kind === 'off') return Infinity;
      const limit = target.kind === 'ms' ? cost.maxChunkTokens(scheduled(), startPos, target.ms) : uncalibratedPrefillTokens(cost.numChunkSteps) - prefillTokens;
      return prefillTokens === 0 ? Math.max(limit, MIN_PREFILL_TOKENS) : Math.max(limit, 0);
    },
    event(scheduled) {
      if (!budget) return undefined;
      const event: StepBudgetEvent = { calibrated };
      if (!calibrated) return event;
      if (target.kind === 'ms') event.targetMs = target.ms;
      if (scheduled) event.predictedMs = cost.predictShape(scheduled);
      if (decodeOnlyMs !== undefined) event.decodeOnlyMs = decodeOnlyMs;
      return event;
    },
  };
}

function stepTarget(budget: StepBudget | null, calibrated: boolean, hasDecodes: boolean, decodeOnlyMs: number | undefined): StepTarget {
  // `multiple` binds only beside decode rows: with none, nobody waits on the step but new arrivals
  const bindsMultiple = budget?.multiple !== undefined && hasDecodes;
  if (!budget || (!bindsMultiple && budget.maxStepMs === undefined)) return { kind: 'off' };
  if (!calibrated) return { kind: 'calibrating' };
  const ms = Math.min(budget.maxStepMs ?? Infinity, bindsMultiple ? budget.multiple! * decodeOnlyMs! : Infinity);
  return { kind: 'ms', ms };
}
