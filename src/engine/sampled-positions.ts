// The sampled positions of a plan, part of the runner contract: where each row samples (after its
// last known token, then after each draft) and the inverse that splits ids back into rows and drafts.
import type { StepResult, StepRow } from './types';

/** Positions a row samples: after its last known token, then one after each draft (none for a row that does not sample). */
export function numSampledPositions(row: StepRow): number {
  return row.sample ? 1 + (row.numDraftTokens ?? 0) : 0;
}

/** Index in row.tokenIds of the token the row's i-th sampled position follows (i drafts are fed before it). */
export function sampledTokenIndex(row: StepRow, i: number): number {
  return row.tokenIds.length - 1 - (row.numDraftTokens ?? 0) + i;
}

/** The position of the token the row's i-th sampled position generates (its sampling draw's key). */
export function sampledPosition(row: StepRow, i: number): number {
  return row.startPos + sampledTokenIndex(row, i) + 1;
}

/**
 * The row of each of a plan's sampled positions, in the one order every runner samples them: rows
 * in plan order, each row's positions in order (a row with k drafts appears k + 1 times).
 */
export function sampledRows(rows: readonly StepRow[]): number[] {
  const order: number[] = [];
  rows.forEach((row, r) => {
    for (let i = numSampledPositions(row); i > 0; i--) order.push(r);
  });
  return order;
}

/**
 * The inverse: ids in sampled-position order ([number of sampled positions]) split into
 * StepResult's `sampledIds` ([rows], -1 where a row does not sample: each row's first id) and,
 * where any row carries drafts, `draftSampledIds` (the ids after each draft, rows in plan order).
 */
export function splitSampledIds(rows: readonly StepRow[], ids: ArrayLike<number>): Pick<StepResult, 'sampledIds' | 'draftSampledIds'> {
  let numSampled = 0;
  for (const row of rows) numSampled += numSampledPositions(row);
  if (ids.length < numSampled) throw new RangeError(`${ids.length} sampled ids for a plan that samples ${numSampled} positions`);
  const sampledIds = new Int32Array(rows.length).fill(-1); // [numRows]
  const numDrafts = numSampled - rows.filter((row) => row.sample).length;
  const draftSampledIds = numDrafts > 0 ? new Int32Array(numDrafts) : null; // [numDrafts], rows in plan order
  let at = 0;
  let draftAt = 0;
  rows.forEach((row, r) => {
    const n = numSampledPositions(row);
    if (n === 0) return;
    sampledIds[r] = ids[at++];
    for (let i = 1; i < n; i++) draftSampledIds![draftAt++] = ids[at++];
  });
  return draftSampledIds ? { sampledIds, draftSampledIds } : { sampledIds };
}
