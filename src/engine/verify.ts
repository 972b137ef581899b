// Verification of one row's samples: which drafted tokens are accepted and which tokens the request
// gains, with plain decode's finish rules applied token by token. No KV or pool: the scheduler rolls back.
import type { FinishReason } from './events';
import type { Request } from './request';
import { NON_FINITE_LOGITS } from './types';

/** What a row's samples did to its request. */
export interface AcceptedRun {
  /** Tokens appended, in order (the accepted drafts, then the first sample past them). */
  tokenIds: number[];
  text: string;
  numAccepted: number;
  /** A draft was tested and rejected (false when all were accepted or the turn ended first). */
  rejected: boolean;
  finishReason?: FinishReason;
  error?: string;
}

/** The turn error for a row the sampler marked NON_FINITE_LOGITS; `position` is the token's. */
function nonFiniteLogitsMessage(position: number): string {
  return `the model produced NaN/Inf logits at position ${position}; the turn was stopped`;
}

/**
 * Appends a row's samples to `request`: `firstId`, sampled after its last known token, then, while
 * each equals the draft it was sampled in place of, the id sampled after that draft (`draftIds`,
 * [drafts.length]). Every id is exactly the token plain decode would have sampled at its position
 * (same logits, same RNG draw), so taking the longest matching run plus the first id past it gives
 * plain decode's output, greedy or not: a draft x is kept with probability p(x), and a rejected one
 * is replaced by a draw from p without x, renormalized (rejection sampling with a deterministic
 * proposal). EOS, stop strings, maxTokens and the context end the run token by token, as in plain
 * decode. Each accepted draft advances numComputedTokens: its KV, written this step, is the
 * sequence's own; a rejected draft's KV lies past it and is overwritten when that position is fed.
 */
export function acceptSamples(request: Request, firstId: number, drafts: readonly number[], draftIds: ArrayLike<number>, contextLimit: number): AcceptedRun {
  const run: AcceptedRun = { tokenIds: [], text: '', numAccepted: 0, rejected: false };
  for (let j = 0; j <= drafts.length; j++) {
    const tokenId = j === 0 ? firstId : draftIds[j - 1];
    if (tokenId === NON_FINITE_LOGITS) {
      // sampling garbage (argmax of NaN is id 0) would stream <pad> forever; only this row ends
      run.finishReason = 'error';
      run.error = nonFiniteLogitsMessage(request.numTokens);
      break;
    }
    if (!Number.isInteger(tokenId) || tokenId < 0) {
      run.finishReason = 'error';
      run.error = `runner returned token id ${tokenId}`;
      break;
    }
    const appended = request.appendToken(tokenId, contextLimit);
    run.tokenIds.push(tokenId);
    run.text += appended.delta;
    const isAccepted = j < drafts.length && tokenId === drafts[j];
    if (isAccepted) {
      request.numComputedTokens++;
      run.numAccepted++;
    }
    run.finishReason = appended.finishReason;
    if (run.finishReason) break;
    if (!isAccepted) {
      run.rejected = j < drafts.length;
      break;
    }
  }
  return run;
}
