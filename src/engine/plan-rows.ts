// The scheduler's side of a StepPlan: a step's scheduled entries, the plan row each becomes and
// the cost model's view of them. Not which requests ride (scheduler.ts) or how many drafts (speculation.ts).
import type { KVCacheManager } from './kv-manager';
import { countsTokens } from './penalties';
import type { Request } from './request';
import { attendedPositions, type StepShape } from './step-cost';
import type { StepRow } from './types';

/** One row of the step being planned. */
export interface ScheduledEntry {
  request: Request;
  /** Tokens fed this step, drafts included. */
  numNewTokens: number;
  /** Drafted tokens fed after the known ones (the tail of the row's tokenIds). */
  drafts: readonly number[];
}

export const NO_DRAFTS: readonly number[] = [];

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
    blockTables: kv.blockTables(request.requestId), // [groups] of [numBlocks of the request]
    sampling: request.sampling,
    sample,
    ...(drafts.length > 0 ? { numDraftTokens: drafts.length } : {}),
    // penalties count the row's own tokens: the runner sees them as data (drafts are the row's tail)
    ...(sample && countsTokens(request.sampling) ? { penaltyTokens: Int32Array.from(request.tokenIds), numPromptTokens: request.numPromptTokens } : {}),
  };
}

/** Tokens a request has that its KV does not hold yet (1: a decode row). */
export function remaining(request: Request): number {
  return request.numTokens - request.numComputedTokens;
}
