// A step's scheduled rows and their speculative half: the plan row an entry becomes, the drafts a
// decode row gets to verify (sized by speculation.ts, with their KV slots) and what its samples do
// (verify.ts's accepted run, acceptance counts, rejected KV rolled back). No admission or preemption.
import type { StepRowEvent } from './events';
import type { KVCacheManager } from './kv-manager';
import type { Request } from './request';
import { chooseDraftLengths, draftCandidate, type DraftCandidate, type Speculation } from './speculation';
import type { StepTarget } from './step-budget';
import { attendedPositions, type StepCostModel, type StepShape } from './step-cost';
import { countsTokens } from './penalties';
import type { StepRow } from './types';
import { acceptSamples, type AcceptedRun } from './verify';

/** One row of the step being planned. */
export interface ScheduledEntry {
  request: Request;
  /** Tokens fed this step, drafts included. */
  numNewTokens: number;
  /** Drafted tokens fed after the known ones (the tail of the row's tokenIds). */
  drafts: readonly number[];
}

export const NO_DRAFTS: readonly number[] = [];
const NO_TOKENS = new Int32Array(0);

/** The cost model's view of some scheduled rows (start = each request's computed tokens), written into `shape`. */
export function shapeOf(entries: readonly ScheduledEntry[], shape: StepShape): StepShape {
  shape.numTokens = 0;
  shape.numRows = entries.length;
  shape.attended = 0;
  for (const { request, numNewTokens } of entries) {
    shape.numTokens += numNewTokens;
    shape.attended += attendedPositions(request.numComputedTokens, numNewTokens);
  }
  return shape;
}

/** The plan row an entry becomes: its known tokens from the computed ones on, then its drafts. */
export function planRow({ request, numNewTokens, drafts }: ScheduledEntry, kv: KVCacheManager): StepRow {
  const start = request.numComputedTokens;
  const numKnown = numNewTokens - drafts.length;
  const tokenIds = new Int32Array(numNewTokens); // [numNewTokens] known tokens, then drafts
  tokenIds.set(request.tokenIds.slice(start, start + numKnown));
  tokenIds.set(drafts, numKnown);
  const sample = start + numKnown === request.numTokens;
  return {
    sessionId: request.sessionId,
    tokenIds,
    startPos: start,
    blockTable: Int32Array.from(kv.blockTable(request.requestId)), // [numBlocks of the request]
    ...(kv.windowGroup ? { windowBlockTable: Int32Array.from(kv.windowBlockTable(request.requestId)) } : {}), // [numBlocks of the request]
    sampling: request.sampling,
    sample,
    ...(drafts.length > 0 ? { numDraftTokens: drafts.length } : {}),
    // penalties count the row's own tokens: the runner sees them as data (drafts are the row's tail)
    ...(sample && countsTokens(request.sampling) ? { penaltyTokens: Int32Array.from(request.tokenIds), numPromptTokens: request.numPromptTokens } : {}),
  };
}

/** What addDrafts reads of the scheduler. */
export interface DraftContext {
  kv: KVCacheManager;
  stepCost: StepCostModel;
  speculation: Speculation;
  maxDraftTokens: number;
  contextLimit: number;
}

/**
 * Gives decode rows drafted tokens (speculation.ts sizes them) from the budget the step has left,
 * and their KV slots; a row whose slots the pool cannot supply drafts only into blocks it holds.
 * Never preempts: speculation must not cost another request its KV.
 */
export function addDrafts(ctx: DraftContext, scheduled: ScheduledEntry[], budgetTokens: number, target: StepTarget): void {
  const candidates: DraftCandidate[] = [];
  const entries: ScheduledEntry[] = [];
  const decodes: ScheduledEntry[] = [];
  for (const entry of scheduled) {
    const { request } = entry;
    if (entry.numNewTokens !== 1 || request.numComputedTokens !== request.numTokens - 1) continue;
    decodes.push(entry);
    const candidate = draftCandidate(request, ctx.speculation, ctx.maxDraftTokens, ctx.contextLimit);
    if (!candidate) continue;
    candidates.push(candidate);
    entries.push(entry);
  }
  if (candidates.length === 0) return;
  const cost = (shape: StepShape): number => ctx.stepCost.predictShape(shape);
  const scratch: StepShape = { numTokens: 0, numRows: 0, attended: 0 };
  const decodeRate = decodes.length / cost(shapeOf(decodes, scratch));
  const lengths = chooseDraftLengths(candidates, { ...shapeOf(scheduled, scratch) }, { cost, calibrated: ctx.stepCost.calibrated, decodeRate, budgetTokens, target });
  entries.forEach((entry, i) => {
    let k = lengths[i];
    if (k === 0) return;
    const { request } = entry;
    if (ctx.kv.allocateSlots(request, 1 + k) === null) {
      k = Math.min(k, ctx.kv.blockTable(request.requestId).length * ctx.kv.blockSize - request.numTokens);
      if (k <= 0) return;
    }
    entry.numNewTokens = 1 + k;
    entry.drafts = candidates[i].drafts.slice(0, k);
  });
}

/**
 * Appends a row's sampled tokens to its request (verify.ts accepts drafts) and fills the row's new
 * tokens and text; with drafts, counts them for the request's acceptance estimate and gives back
 * the tail blocks only rejected drafts used. The caller ends the turn on `finishReason`.
 */
export function applyRowSamples(kv: KVCacheManager, contextLimit: number, request: Request, row: StepRowEvent, firstId: number, drafts: readonly number[], draftIds: Int32Array): AcceptedRun {
  const run = acceptSamples(request, firstId, drafts, draftIds, contextLimit);
  row.newTokenIds = run.tokenIds.length > 0 ? Int32Array.from(run.tokenIds) : NO_TOKENS;
  row.newText = run.text;
  if (drafts.length > 0) {
    row.numAccepted = run.numAccepted;
    request.numDraftAccepted += run.numAccepted;
    request.numDraftTested += run.numAccepted + (run.rejected ? 1 : 0);
    kv.releaseRejectedSlots(request);
    kv.cacheComputedBlocks(request);
  }
  return run;
}
