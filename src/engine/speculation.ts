// Speculative decoding policy over a view of a request: the `speculation` setting and its check,
// a request's draft statistics (acceptance estimate, 'auto' backoff) and how many drafted tokens each
// decode row carries in a step. Not the proposer (drafts.ts), verification (verify.ts) or KV slots (the scheduler).
import { proposeDrafts } from './drafts';
import { InvalidOptionError } from './errors';
import { attendedPositions, type StepCostModel, type StepShape } from './step-cost';
import type { StepTarget } from './step-budget';

/**
 * 'auto': each decode row drafts as many tokens as the step cost model and the request's measured
 * acceptance say pay off (up to the runner's maxDraftTokens); 'off': never; `{ maxDraftTokens }`:
 * as many as the proposer has, up to that many, whatever they cost (benchmarks, tests) — still
 * within the token budget, the step-time budget, the KV pool and the runner's own limit.
 */
export type Speculation = 'auto' | 'off' | { maxDraftTokens: number };

export const DEFAULT_SPECULATION: Speculation = 'auto';
/** More drafts than this per row only verify tokens the acceptance estimate already gave up on. */
export const MAX_DRAFT_TOKENS = 32;
/**
 * The acceptance estimate starts from this many accepted out of PRIOR_TESTED (0.5): a request's
 * first drafts are neither trusted blindly nor never tried, and a few outcomes move it.
 */
const PRIOR_ACCEPTED = 1;
const PRIOR_TESTED = 2;
/**
 * Drafts an 'auto' row carries while the cost model is still calibrating: a cost model fitted to
 * decode steps alone cannot tell a fed token's cost from a row's, and only steps that feed more
 * tokens than rows (chunks, or these) teach it; a short run keeps the price of a wrong guess small.
 */
export const EXPLORE_DRAFT_TOKENS = 2;

/** Checks a speculation setting from the API; returns a fresh copy. Throws InvalidOptionError naming `option`. */
export function validateSpeculation(value: unknown, option = 'speculation'): Speculation {
  if (value === 'auto' || value === 'off') return value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const max = (value as Record<string, unknown>).maxDraftTokens;
    if (keys.length === 1 && Number.isInteger(max) && (max as number) >= 0 && (max as number) <= MAX_DRAFT_TOKENS) {
      return { maxDraftTokens: max as number };
    }
    if (keys.length === 1 && keys[0] === 'maxDraftTokens') {
      throw new InvalidOptionError(`${option}.maxDraftTokens`, max, `an integer from 0 to ${MAX_DRAFT_TOKENS}`);
    }
  }
  throw new InvalidOptionError(option, value, "'auto', 'off' or { maxDraftTokens }");
}

/** A request's setting under the engine's: 'off' on either side wins, then an explicit length (the session's first). */
export function combineSpeculation(engine: Speculation, session: Speculation): Speculation {
  if (engine === 'off' || session === 'off') return 'off';
  if (typeof session === 'object') return session;
  return engine;
}

/**
 * Probability that a request's next drafted token is accepted, given the drafts it verified so
 * far: `numTested` counts the tokens whose fate was decided (each accepted one and the first
 * rejected one of a run; drafts after a rejection were never tested).
 */
export function acceptanceRate(numAccepted: number, numTested: number): number {
  return (numAccepted + PRIOR_ACCEPTED) / (numTested + PRIOR_TESTED);
}

/** Longest an 'auto' request waits, in output tokens, after verifications that gained nothing. */
export const MAX_BACKOFF_TOKENS = 64;

/**
 * A request's one draft-statistics record, which only the scheduler updates (recordVerification,
 * then recordPayoff once the step's time is known). 'auto' backs off: a verify step that did not
 * pay (made fewer tokens per measured ms than its decode rows alone are predicted to) doubles
 * `backoffTokens` (1, 2, 4, ... up to MAX_BACKOFF_TOKENS) and the request drafts nothing until its
 * output reaches `resumeAt`; one that paid halves it. So drafts that do not pay cost a handful of
 * steps per turn whatever the cost model predicts of them (it prices a verified position as a
 * prompt token, which needs no logits or sampling).
 */
export interface DraftStats {
  /** Drafts whose fate was decided (each accepted one and the first rejected one of a run). */
  tested: number;
  accepted: number;
  backoffTokens: number;
  /** Output tokens the request must have before 'auto' drafts again. */
  resumeAt: number;
}

export function newDraftStats(): DraftStats {
  return { tested: 0, accepted: 0, backoffTokens: 0, resumeAt: 0 };
}

/** Records one verified row: `numAccepted` drafts kept, `rejected` if a draft was tested and refused. */
export function recordVerification(stats: DraftStats, numAccepted: number, rejected: boolean): void {
  stats.accepted += numAccepted;
  stats.tested += numAccepted + (rejected ? 1 : 0);
}

/** Records whether a request's verify step paid; `numOutputTokens` after it. */
export function recordPayoff(stats: DraftStats, paid: boolean, numOutputTokens: number): void {
  stats.backoffTokens = paid ? Math.floor(stats.backoffTokens / 2) : Math.min(MAX_BACKOFF_TOKENS, Math.max(1, 2 * stats.backoffTokens));
  stats.resumeAt = numOutputTokens + stats.backoffTokens;
}

/**
 * Whether a step's drafts paid: its `numRows` rows made `numRows + numAccepted` tokens in
 * `elapsedMs`, against `numRows` in `decodeOnlyMs` (the cost model's decode-only step of the same
 * rows without drafts). Without a usable time (a clock that did not move, no prediction yet) a
 * step pays when it accepted any draft.
 */
export function draftsPaid(numRows: number, numAccepted: number, elapsedMs: number, decodeOnlyMs: number): boolean {
  if (!(elapsedMs > 0 && decodeOnlyMs > 0)) return numAccepted > 0;
  return (numRows + numAccepted) / elapsedMs >= numRows / decodeOnlyMs;
}

/** What the policy reads of a request (Request is one). */
export interface SpeculatingRequest {
  readonly speculation: Speculation;
  readonly tokenIds: readonly number[];
  readonly numPromptTokens: number;
  readonly numOutputTokens: number;
  readonly numTokens: number;
  readonly numComputedTokens: number;
  readonly maxTokens: number;
  readonly predictionTokenIds: readonly number[] | undefined;
  readonly draftStats: Readonly<DraftStats>;
}

/** One decode row that may carry drafts. */
export interface DraftCandidate {
  /** Proposed tokens, already cut to the most this row may carry. */
  drafts: readonly number[];
  /** `{ maxDraftTokens }`: take every proposed token the budgets allow. */
  fixed: boolean;
  /** acceptanceRate() of the request. */
  acceptance: number;
  /** Position of the row's first fed token, and tokens it feeds before any draft. */
  startPos: number;
  numTokens: number;
}

/**
 * The draft candidate of a decode row, or null when its request does not speculate, is backing off
 * ('auto' only) or nothing is proposed. Drafts are cut so that k accepted ones plus the target's next
 * token fit maxTokens and every fed position fits the context (`contextLimit`), and to the runner's `maxDraftTokens`.
 */
export function draftCandidate(request: SpeculatingRequest, engine: Speculation, maxDraftTokens: number, contextLimit: number): DraftCandidate | null {
  const setting = combineSpeculation(engine, request.speculation);
  if (setting === 'off') return null;
  const fixed = typeof setting === 'object';
  const stats = request.draftStats;
  if (!fixed && request.numOutputTokens < stats.resumeAt) return null;
  const cap = Math.min(maxDraftTokens, fixed ? setting.maxDraftTokens : Infinity, request.maxTokens - request.numOutputTokens - 1, contextLimit - request.numTokens);
  const drafts = proposeDrafts(request.tokenIds, request.numPromptTokens, request.predictionTokenIds, cap);
  if (drafts.length === 0) return null;
  return { drafts, fixed, acceptance: acceptanceRate(stats.accepted, stats.tested), startPos: request.numComputedTokens, numTokens: request.numTokens - request.numComputedTokens };
}

/** What stepDrafts reads of the step and the scheduler. */
export interface StepDraftContext {
  stepCost: StepCostModel;
  speculation: Speculation;
  maxDraftTokens: number;
  contextLimit: number;
  /** Fed tokens the token budget has left. */
  budgetTokens: number;
  target: StepTarget;
  /** The step as scheduled so far, and its decode rows alone. */
  stepShape: StepShape;
  decodeShape: StepShape;
}

/** Drafts for a step's decode rows (`rows`, each feeding its one known token), per row: none, or the tokens to carry. */
export function stepDrafts(rows: readonly SpeculatingRequest[], ctx: StepDraftContext): (readonly number[])[] {
  const drafts: (readonly number[])[] = rows.map(() => []);
  const at: number[] = [];
  const candidates: DraftCandidate[] = [];
  rows.forEach((request, i) => {
    const candidate = draftCandidate(request, ctx.speculation, ctx.maxDraftTokens, ctx.contextLimit);
    if (!candidate) return;
    at.push(i);
    candidates.push(candidate);
  });
  if (candidates.length === 0) return drafts;
  const cost = (shape: StepShape): number => ctx.stepCost.predictShape(shape);
  const decodeRate = ctx.decodeShape.numRows / cost(ctx.decodeShape);
  const lengths = chooseDraftLengths(candidates, { ...ctx.stepShape }, { cost, calibrated: ctx.stepCost.calibrated, decodeRate, budgetTokens: ctx.budgetTokens, target: ctx.target });
  lengths.forEach((k, c) => (drafts[at[c]!] = candidates[c]!.drafts.slice(0, k)));
  return drafts;
}

export interface DraftLimits {
  /** Predicted step ms for a step shape (the cost model). */
  cost: (shape: StepShape) => number;
  /** The cost model has seen enough steps to trust its per-token cost (until then 'auto' explores). */
  calibrated: boolean;
  /** Tokens per ms the step's decode rows make without drafts: what a draft must beat. */
  decodeRate: number;
  /** Fed tokens the token budget has left. */
  budgetTokens: number;
  /** The step's time target (step-budget.ts): drafts must keep within `ms`; none ride while it is calibrating. */
  target: StepTarget;
}

/**
 * Draft lengths for `rows` in a step whose other rows make `base`, chosen greedily: the draft with
 * the highest expected gain goes next (fixed rows first, then acceptance^j for a row's j-th draft:
 * the chance that it and every draft before it are accepted, each one more token). An 'auto' draft
 * is taken only when its gain per predicted ms beats `decodeRate`, so where a fed token costs as
 * much as a decode row's share of the step (large cohorts, a compute-bound runner) or acceptance
 * is low, lengths fall to 0 by themselves. Every draft keeps the step within the limits. While the
 * model calibrates, 'auto' rows carry up to EXPLORE_DRAFT_TOKENS.
 */
export function chooseDraftLengths(rows: readonly DraftCandidate[], base: StepShape, limits: DraftLimits): number[] {
  const lengths = rows.map(() => 0);
  const exploring = !limits.calibrated;
  const maxLengths = rows.map((row) => (row.fixed ? row.drafts.length : Math.min(row.drafts.length, exploring ? EXPLORE_DRAFT_TOKENS : Infinity)));
  const done = maxLengths.map((max) => max === 0);
  const shape: StepShape = { ...base };
  let stepMs = limits.cost(shape);
  let budgetTokens = limits.budgetTokens;
  while (budgetTokens > 0) {
    let best = -1;
    let bestGain = -Infinity;
    rows.forEach((row, r) => {
      if (done[r]) return;
      const gain = row.fixed ? Infinity : row.acceptance ** (lengths[r] + 1);
      if (gain > bestGain) {
        best = r;
        bestGain = gain;
      }
    });
    if (best < 0) break;
    const row = rows[best];
    const fed = row.numTokens + lengths[best];
    const trial: StepShape = {
      numTokens: shape.numTokens + 1,
      numRows: shape.numRows,
      attended: shape.attended + attendedPositions(row.startPos, fed + 1) - attendedPositions(row.startPos, fed),
    };
    const trialMs = limits.cost(trial);
    const fitsTime = limits.target.kind === 'off' || (limits.target.kind === 'ms' && trialMs <= limits.target.ms);
    const pays = row.fixed || exploring || bestGain > limits.decodeRate * (trialMs - stepMs);
    if (!fitsTime || !pays) {
      done[best] = true; // a row's later drafts gain less and cost no less
      continue;
    }
    lengths[best]++;
    if (lengths[best] === maxLengths[best]) done[best] = true;
    shape.numTokens = trial.numTokens;
    shape.attended = trial.attended;
    stepMs = trialMs;
    budgetTokens--;
  }
  return lengths;
}
