// The scheduler's speculation wiring: a step's decode rows get the drafts speculation.ts picks, with
// their KV slots, and a decode-only step that verified drafts is judged once its time is known.
// Not the policy (speculation.ts), the proposer (drafts.ts) or the check of drafts (verify.ts).
import type { KVCacheManager } from './kv-manager';
import { remaining, shapeOf, type ScheduledEntry } from './plan-rows';
import type { Request } from './request';
import { draftsPaid, recordPayoff, stepDrafts, type StepDraftContext } from './speculation';
import { attendedPositions, type StepCostModel, type StepShape } from './step-cost';
import type { StepPlan } from './types';

/**
 * Gives decode rows the drafts speculation.ts picks, with their KV slots; a row whose slots the
 * pool cannot supply drafts only into blocks it holds. Never preempts: speculation must not cost
 * another request its KV.
 */
/** `context`: speculation's step context less the shapes worked out here; `shape`: the scheduler's scratch shape. */
export function scheduleDrafts(scheduled: readonly ScheduledEntry[], context: Omit<StepDraftContext, 'stepShape' | 'decodeShape'>, kv: KVCacheManager, shape: StepShape): void {
  const decodes = scheduled.filter((e) => e.numNewTokens === 1 && remaining(e.request) === 1);
  const stepShape = { ...shapeOf(scheduled, shape) };
  const decodeShape = { ...shapeOf(decodes, shape) };
  const drafts = stepDrafts(decodes.map((e) => e.request), { ...context, stepShape, decodeShape });
  decodes.forEach((entry, i) => {
    const { request } = entry;
    let k = drafts[i]!.length;
    if (k === 0) return;
    if (kv.allocateSlots(request, 1 + k) === null) {
      k = Math.min(k, kv.blockTable(request.requestId).length * kv.blockSize - request.numTokens);
      if (k <= 0) return;
    }
    entry.numNewTokens = 1 + k;
    entry.drafts = drafts[i]!.slice(0, k);
  });
}

/**
 * The last update()'s decode-only step with verified drafts, judged when the engine reports its
 * time: each request that verified drafts in it backs off or draws nearer ('auto', speculation.ts)
 * by whether the step made more tokens per ms than its rows without drafts would have.
 */
export class DraftPayoff {
  private last: { stepIndex: number; requests: Request[]; numRows: number; numAccepted: number } | null = null;

  /** A step's verifying requests; judged only if every row of the step was a decode or verify row. */
  note(stepIndex: number, verified: Request[], numRows: number, numAccepted: number, decodeOnly: boolean): void {
    this.last = verified.length > 0 && decodeOnly ? { stepIndex, requests: verified, numRows, numAccepted } : null;
  }

  /** Judges the noted step if `plan` is it (decode-only steps are the ones a decode-only prediction prices). */
  judge(plan: StepPlan, elapsedMs: number, stepCost: StepCostModel): void {
    const verified = this.last?.stepIndex === plan.stepIndex ? this.last : null;
    this.last = null;
    if (!verified) return;
    const decodeOnlyMs = stepCost.calibrated ? stepCost.predictDecodeOnly(decodeOnlyShape(plan)) : 0;
    const paid = draftsPaid(verified.numRows, verified.numAccepted, elapsedMs, decodeOnlyMs);
    for (const request of verified.requests) recordPayoff(request.draftStats, paid, request.numOutputTokens);
  }
}

/** A decode-only plan's shape without its drafts: each row feeds its one known token. */
function decodeOnlyShape(plan: StepPlan): StepShape {
  const shape: StepShape = { numTokens: plan.rows.length, numRows: plan.rows.length, attended: 0 };
  for (const row of plan.rows) shape.attended += attendedPositions(row.startPos, 1);
  return shape;
}
