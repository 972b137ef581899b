// Plain-data records the engine emits: one StepEvent per step, and session snapshots.
// Data only (no classes, no Maps), so they cross the worker boundary as they are. Field names
// follow src/protocol/api.ts (which the engine may not import); extra fields are additions.

export type EngineMode = 'batched' | 'serialized';

/** Why a request stopped: EOS token, stop string, token limit (max tokens or KV capacity), cancel, error. */
export type FinishReason = 'eos' | 'stop' | 'length' | 'cancelled' | 'error';

export type SessionState = 'idle' | 'waiting' | 'prefill' | 'decode' | 'done' | 'cancelled' | 'error';

/** A token as its log-probability reports it: the id, its text (the tokenizer's decode of it alone). */
export interface TokenLogprobAlternative {
  id: number;
  token: string;
  logprob: number;
}

/** One generated token's log-probability and the most likely tokens at its position. */
export interface TokenLogprob extends TokenLogprobAlternative {
  /** Most likely first (the sampling's `logprobs` of them). */
  top: TokenLogprobAlternative[];
}
/** One row of a step as the UI sees it. */
export interface StepRowEvent {
  sessionId: string;
  requestId: string;
  /** 'decode' feeds the one token sampled last step (and any drafts after it); anything else (prompt, recompute) is 'prefill'. */
  kind: 'prefill' | 'decode';
  numTokens: number;
  /** Sequence position of the row's first fed token. */
  position: number;
  /**
   * [0 .. numDrafted + 1] tokens this row added: none for non-final prefill chunks or a cancelled
   * row, one for plain decode, the accepted drafts plus the target's next token for a verify row.
   */
  newTokenIds: Int32Array;
  /** Text the new tokens completed ('' mid-character or while it may still become a stop string). */
  newText: string;
  /**
   * For a session whose sampling asks for logprobs: one per new token in order, an end-of-sequence
   * token left out (it has no text in the reply); absent otherwise.
   */
  newLogprobs?: TokenLogprob[];
  finishReason?: FinishReason;
  /** Drafted tokens the row fed for verification (speculative decoding); absent: none. Counted in numTokens. */
  numDrafted?: number;
  /** Of those, the ones accepted (each also in newTokenIds); present with numDrafted. */
  numAccepted?: number;
}

/** A request that ended this step, with or without a row in it (e.g. cancelled while queued). */
export interface FinishedEvent {
  sessionId: string;
  requestId: string;
  reason: FinishReason;
  /** Text not yet delivered in a row's newText (held-back stop-string prefix, pending bytes). */
  newText: string;
  error?: string;
}

/**
 * Why a request is not in the cohort: 'queued' behind earlier arrivals (row cap, token budget,
 * serialized mode); 'kv-full' the pool has no room for it yet; 'preempted' evicted to make room
 * for earlier requests, it will recompute its KV when readmitted; 'grammar' its output constraint
 * is being compiled (it joins once ready).
 */
export type WaitReason = 'queued' | 'kv-full' | 'preempted' | 'grammar';

export interface WaitingEvent {
  sessionId: string;
  requestId: string;
  reason: WaitReason;
}

/** Block pool counts, as the pool reports them. */
export interface KvBlockStats {
  /** Blocks that can hold KV (block 0 excluded). */
  numBlocks: number;
  /** Blocks referenced by at least one request. */
  numUsed: number;
  /** Blocks ready to hand out: never-cached ones plus cached blocks nobody references. */
  numFree: number;
  /** Blocks referenced by more than one request (prefix sharing). */
  numShared: number;
  /** Blocks registered in the prefix cache, in use or not. */
  numCached: number;
}

/**
 * How the step-time budget sized a step (src/engine/step-budget.ts). The step's measured time is
 * the event's elapsedMs; compare it with predictedMs to see how well the cost model fits.
 */
export interface StepBudgetEvent {
  /** The most the plan was allowed to cost, in ms; absent when nothing bounded it by time or while calibrating. */
  targetMs?: number;
  /** The cost model's prediction for the plan as scheduled; absent while calibrating. */
  predictedMs?: number;
  /** The prediction for the step's decode rows alone (what the budget's multiple multiplies); absent without decode rows. */
  decodeOnlyMs?: number;
  /** False while too few steps were measured: prefill is then held to a small fixed chunk. */
  calibrated: boolean;
}

/** One KV cache group's pool after a step (StepEvent.kvGroups). */
export interface KvGroupBlocks {
  /** null: full attention; a number: a sliding window of that many positions. */
  window: number | null;
  used: number;
  total: number;
}

export interface StepEvent {
  stepIndex: number;
  /** Clock reading (ms) when the step began; same clock as session stats. */
  startedAtMs: number;
  /** Wall time of the step (schedule + execute + update), in ms. */
  elapsedMs: number;
  /** Runner-reported GPU time when timestamp queries exist. */
  gpuTimeMs?: number;
  rows: StepRowEvent[];
  /** Tokens fed this step, all rows together. */
  numTokens: number;
  /** Every request that ended in this step, rows or not (e.g. cancelled while queued). */
  finished: FinishedEvent[];
  /** Blocks referenced by at least one request. */
  kvBlocksUsed: number;
  /** Blocks ready to hand out (never-cached plus unreferenced cached ones). */
  kvBlocksFree: number;
  /** Blocks referenced by more than one request (prefix sharing). */
  kvBlocksShared: number;
  /** Blocks in the prefix cache, in use or not. */
  kvBlocksCached: number;
  /** Blocks that can hold KV (block 0 excluded). */
  kvBlocksTotal: number;
  /** [runner's kvGroups] each KV cache group's pool: its kind, blocks referenced, and its total (block 0 excluded); the first is the pool the kvBlocks figures above count. Empty when a server serves the model. */
  kvGroups: KvGroupBlocks[];
  /** Requests waiting to be (re)admitted after this step. */
  queueDepth: number;
  /** Those requests, in arrival order, each with why it waits. */
  waiting: WaitingEvent[];
  /** Requests holding KV blocks after this step. */
  numRunning: number;
  mode: EngineMode;
  /** Present while a step-time budget is set. */
  stepBudget?: StepBudgetEvent;
}

export interface SessionStats {
  /** Prompt tokens of the current (or last) turn. */
  tokensIn: number;
  /** Tokens generated by the current (or last) turn. */
  tokensOut: number;
  /** Prompt tokens the current turn found in the prefix cache instead of computing. */
  cachedTokens: number;
  totalTokensIn: number;
  totalTokensOut: number;
  /** Tokens of the turn's prediction (OpenAI's Predicted Outputs); absent without one. */
  predictionTokens?: number;
  /**
   * Of those, the ones that appeared in the turn's output, in order (src/engine/prediction.ts);
   * set when the turn ends, with predictionTokens.
   */
  acceptedPredictionTokens?: number;
  finishReason?: FinishReason;
  error?: string;
}

export interface SessionSnapshot {
  sessionId: string;
  state: SessionState;
  numTurns: number;
  stats: SessionStats;
}
