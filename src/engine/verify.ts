// Verification of one row's samples, a pure function over token ids (vLLM's rejection sampler with
// a deterministic proposal): which drafts are accepted and which ids follow. No request, KV or finish rules.
import { NON_FINITE_LOGITS } from './types';

/** What a row's sampled ids say about its drafts. */
export interface Verification {
  /** The accepted drafts, then the first id sampled past them; cut before an invalid id. */
  tokenIds: number[];
  /** Leading drafts equal to the id sampled in their place (the first numAccepted of tokenIds). */
  numAccepted: number;
  /** The first id that is no token (NON_FINITE_LOGITS, or not a non-negative integer), and its index in the run. */
  invalid?: { index: number; id: number };
}

/**
 * Verifies `drafts` against the ids sampled after the row's last known token (`firstId`) and after
 * each draft (`draftIds`, [drafts.length]). Every id is exactly the token plain decode would have
 * sampled at its position (same logits, same RNG draw), so the longest run of drafts equal to the
 * id sampled in their place, plus the first id past it, is plain decode's output, greedy or not: a
 * draft x is kept with probability p(x), and a rejected one is replaced by a draw from p without x.
 */
export function verifyDrafts(firstId: number, drafts: readonly number[], draftIds: ArrayLike<number>): Verification {
  const verification: Verification = { tokenIds: [], numAccepted: 0 };
  for (let j = 0; j <= drafts.length; j++) {
    const id = j === 0 ? firstId : draftIds[j - 1]!;
    if (id === NON_FINITE_LOGITS || !Number.isInteger(id) || id < 0) {
      verification.invalid = { index: j, id };
      break;
    }
    verification.tokenIds.push(id);
    if (j === drafts.length || id !== drafts[j]) break;
    verification.numAccepted++;
  }
  return verification;
}

/** The turn error for an invalid sampled id at `position` (the sampler marks NaN/Inf logits NON_FINITE_LOGITS). */
export function invalidIdMessage(id: number, position: number): string {
  // sampling garbage (argmax of NaN is id 0) would stream <pad> forever; only this row ends
  if (id === NON_FINITE_LOGITS) return `the model produced NaN/Inf logits at position ${position}; the turn was stopped`;
  return `runner returned token id ${id}`;
}
