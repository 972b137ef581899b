// A step row's event and a sampled row's tokens on its request: the verified run (verify.ts) appended
// under plain decode's finish rules, then its constraint and logprobs checked. Not computed tokens, KV or turn ends (the scheduler).
import type { FinishReason, StepRowEvent } from './events';
import type { Request } from './request';
import { tokenLogprobs } from './token-logprobs';
import type { SampledLogprobs, Tokenizer } from './types';
import { invalidIdMessage, verifyDrafts } from './verify';

const NO_TOKENS = new Int32Array(0);

/** A row's event before its samples: `numKnown` tokens fed from the computed ones on (drafts aside). */
export function rowEvent(request: Request, numKnown: number): StepRowEvent {
  const start = request.numComputedTokens;
  // 'decode' = feeding the one token the previous step sampled; prompt and recompute are prefill
  const isDecode = numKnown === 1 && start === request.numTokens - 1 && start >= request.numPromptTokens;
  return {
    sessionId: request.sessionId,
    requestId: request.requestId,
    kind: isDecode ? 'decode' : 'prefill',
    numTokens: numKnown,
    position: start,
    newTokenIds: NO_TOKENS,
    newText: '',
  };
}

/** What a sampled row appended to its request. */
export interface SampledRun {
  tokenIds: number[];
  text: string;
  /** Accepted drafts appended (the computed tokens keep their KV). */
  numAccepted: number;
  /** A draft was tested and refused, and the turn goes on. */
  rejected: boolean;
  finishReason?: FinishReason;
  error?: string;
}

/**
 * Appends a row's verified samples to its request token by token under plain decode's finish rules
 * (EOS, stop strings, maxTokens, the context at `contextLimit`): the run may end before its last id.
 */
export function appendSamples(request: Request, firstId: number, drafts: readonly number[], draftIds: ArrayLike<number>, contextLimit: number): SampledRun {
  const verification = verifyDrafts(firstId, drafts, draftIds);
  const run: SampledRun = { tokenIds: [], text: '', numAccepted: 0, rejected: false };
  for (const id of verification.tokenIds) {
    const appended = request.appendToken(id, contextLimit);
    run.tokenIds.push(id);
    run.text += appended.delta;
    run.finishReason = appended.finishReason;
    if (run.finishReason) break;
  }
  run.numAccepted = Math.min(verification.numAccepted, run.tokenIds.length);
  // a draft was tested and refused: its replacement was taken and the turn goes on
  run.rejected = !run.finishReason && run.numAccepted < drafts.length && run.tokenIds.length > run.numAccepted;
  if (!run.finishReason && verification.invalid) {
    run.finishReason = 'error';
    run.error = invalidIdMessage(verification.invalid.id, request.numTokens);
  }
  return run;
}

/** Fills a row's new tokens, text and logprobs; a token its constraint refuses, or missing logprobs, end the run with an error. */
export function fillSampledRow(request: Request, row: StepRowEvent, run: SampledRun, tokenizer: Tokenizer, logprobs: readonly SampledLogprobs[] | undefined): void {
  row.newTokenIds = run.tokenIds.length > 0 ? Int32Array.from(run.tokenIds) : NO_TOKENS;
  row.newText = run.text;
  const matcher = request.constraint?.matcher;
  if (matcher && !run.error) {
    // the sampled tokens were drawn under the row's masks, so the matcher takes each one
    const refused = run.tokenIds.find((id) => !matcher.acceptToken(id));
    if (refused !== undefined) {
      run.finishReason = 'error';
      run.error = `response_format: token ${refused} was sampled outside the constraint`;
    } else if (matcher.isTerminated() && !run.finishReason) {
      run.finishReason = 'stop'; // the constraint ended the reply on a stop token the request does not end on
    }
  }
  if (request.sampling.logprobs !== undefined && !run.error) {
    const rowLogprobs = tokenLogprobs(tokenizer, run.tokenIds, run.finishReason === 'eos', logprobs);
    if (rowLogprobs) {
      row.newLogprobs = rowLogprobs;
    } else {
      // only this turn ends: the others' tokens never depend on it
      run.finishReason = 'error';
      run.error = `the runner returned no logprobs for ${run.tokenIds.length} tokens`;
    }
  }
}
