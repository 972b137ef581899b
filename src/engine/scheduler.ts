// Scheduler: picks each step's rows under a token budget, a row cap and an optional step-time
// budget (step-budget.ts sizes the chunks), preempts when the KV pool says no, gives decode rows their
// drafts (draft-scheduling.ts), and applies the runner's samples (verify.ts checks drafts). The one
// writer of a request's computed tokens. It never sees buffers or sessions' text; its settings are
// scheduler-settings.ts, its waits on grammars constraint-waits.ts.
import { ConstraintWaits } from './constraint-waits';
import type { FinishReason, FinishedEvent, StepBudgetEvent, StepRowEvent, WaitingEvent } from './events';
import type { KVCacheManager } from './kv-manager';
import { Request, type RequestParams } from './request';
import { recordVerification } from './speculation';
import { DraftPayoff, scheduleDrafts } from './draft-scheduling';
import { NO_DRAFTS, planRow, remaining, shapeOf, type ScheduledEntry } from './plan-rows';
import { appendSamples, fillSampledRow, rowEvent, type SampledRun } from './row-samples';
import { changedSettings, initialSettings, type SchedulerConfig, type SchedulerSettings } from './scheduler-settings';
import { sizeStep, type StepSizer } from './step-budget';
import { StepCostModel, type StepShape } from './step-cost';
import { type SampledLogprobs, type StepMaskFill, type StepPlan, type StepResult, type StepRow, type Tokenizer } from './types';

/** The step being scheduled: its entries and what is left of its budgets. */
interface StepInProgress {
  readonly scheduled: ScheduledEntry[];
  tokensLeft: number;
  prefillTokens: number;
  preempted: boolean;
  outOfTime: boolean;
  readonly sizer: StepSizer;
}

/** What a step did, request by request; the session registry and the engine turn it into events. */
export interface StepOutput {
  stepIndex: number;
  rows: StepRowEvent[];
  /** Every request that ended since the previous output, each exactly once. */
  finished: FinishedEvent[];
  numTokens: number;
  /** How the step-time budget sized the step (absent while the budget is off). */
  budget?: StepBudgetEvent;
}

const NO_TOKENS = new Int32Array(0);

export class Scheduler {
  readonly kv: KVCacheManager;
  private current: SchedulerSettings;
  private readonly tokenizer: Tokenizer;
  private readonly maxContextTokens: number;
  /** Not holding blocks, in arrival order (preempted requests go back to their place). */
  private readonly waiting: Request[] = [];
  /** Holding blocks, in arrival order: the last one is preempted first. */
  private readonly running: Request[] = [];
  private readonly requests = new Map<string, Request>();
  private pendingFinished: FinishedEvent[] = [];
  private inFlight: { stepIndex: number; entries: ScheduledEntry[]; budget?: StepBudgetEvent } | null = null;
  /** The last update()'s decode-only step with verified drafts, judged when the engine reports its time (observeStep). */
  private readonly payoff = new DraftPayoff();
  /** Fitted to every executed step, budget on or off, so a budget switched on finds it calibrated. */
  readonly stepCost = new StepCostModel();
  private readonly shape: StepShape = { numTokens: 0, numRows: 0, attended: 0 };
  private nextStepIndex = 0;
  /** The last schedule() could not admit the head of the queue for lack of KV blocks, or preempted. */
  private memoryBound = false;
  private nextArrivalSeq = 1;
  private readonly constraints: ConstraintWaits;

  constructor(kv: KVCacheManager, tokenizer: Tokenizer, config: SchedulerConfig) {
    this.kv = kv;
    this.tokenizer = tokenizer;
    this.maxContextTokens = config.maxContextTokens ?? Infinity;
    this.constraints = new ConstraintWaits(config.constraints ?? null);
    this.current = initialSettings(config);
  }

  /** The settings in force (a copy); change them with configure(). */
  get settings(): Readonly<SchedulerSettings> {
    return { ...this.current };
  }

  /** Changes some settings; they apply from the next schedule(). Values are the caller's to check (the engine validates). */
  configure(changes: Partial<SchedulerSettings>): void {
    this.current = changedSettings(this.current, changes);
  }

  /** Most tokens one request may hold: the model's context or the whole KV pool, whichever is less. */
  get contextLimit(): number {
    return Math.min(this.maxContextTokens, this.kv.capacityTokens);
  }

  get numWaiting(): number {
    return this.waiting.length;
  }

  get numRunning(): number {
    return this.running.length;
  }

  /** Rows a step may carry in the current mode. */
  get rowCap(): number {
    return this.current.mode === 'serialized' ? 1 : this.current.maxRows;
  }

  getRequest(requestId: string): Request | undefined {
    return this.requests.get(requestId);
  }

  /** True while a step would do anything (run rows or report finished requests); a compiling request waits outside steps. */
  hasWork(): boolean {
    return this.running.length > 0 || this.pendingFinished.length > 0 || this.waiting.some((r) => r.cancelRequested || r.constraint?.status !== 'compiling');
  }

  /** Called when a constraint compile settles (the engine wakes its loop). */
  set onConstraintSettled(callback: (() => void) | null) {
    this.constraints.onSettled = callback;
  }

  /** Resolves when some compile in progress settles; null when no waiting request awaits one. */
  whenConstraintSettles(): Promise<void> | null {
    return this.constraints.whenSettles(this.waiting);
  }

  addRequest(params: RequestParams): Request {
    if (this.requests.has(params.requestId)) throw new Error(`duplicate request id ${params.requestId}`);
    const request = new Request(params, this.tokenizer);
    request.arrivalSeq = this.nextArrivalSeq++;
    this.requests.set(request.requestId, request);
    if (request.numPromptTokens > this.kv.capacityTokens) {
      this.finish(request, 'error', `prompt of ${request.numPromptTokens} tokens exceeds the KV capacity of ${this.kv.capacityTokens}`);
    } else if (request.numPromptTokens >= this.maxContextTokens) {
      // >=: the first generated token needs a position of its own
      this.finish(request, 'error', `prompt of ${request.numPromptTokens} tokens does not fit the model's context of ${this.maxContextTokens} tokens`);
    } else {
      this.waiting.push(request);
      if (request.sampling.constraint) this.constraints.start(request, request.sampling.constraint);
    }
    return request;
  }

  /** Takes effect at the next schedule() (or at update() if the request is in the step in flight). */
  cancel(requestId: string): void {
    const request = this.requests.get(requestId);
    if (request && request.status !== 'finished') request.cancelRequested = true;
  }

  schedule(): StepPlan {
    if (this.inFlight) throw new Error(`step ${this.inFlight.stepIndex} is still in flight`);
    for (const request of [...this.waiting, ...this.running]) {
      if (request.cancelRequested) this.finish(request, 'cancelled');
      else if (request.constraint?.status === 'failed') this.finish(request, 'error', request.constraint.error);
    }
    const { maxTokensPerStep, stepBudget, maxDraftTokens, speculation } = this.current;
    const rowCap = this.rowCap;

    // Running requests first. The row cap admits the earliest arrivals; among those, rows
    // feeding one token (decodes) go before longer chunks so a big prefill never stalls them.
    const eligible = this.running.slice(0, rowCap);
    const decodes = eligible.filter((r) => remaining(r) === 1);
    const ordered = [...decodes, ...eligible.filter((r) => remaining(r) !== 1)];
    const decodeShape = decodes.length > 0 ? shapeOf(decodes.map((request) => ({ request, numNewTokens: 1, drafts: NO_DRAFTS })), this.shape) : null;
    const step: StepInProgress = { scheduled: [], tokensLeft: maxTokensPerStep, prefillTokens: 0, preempted: false, outOfTime: false, sizer: sizeStep(stepBudget, this.stepCost, decodeShape) };
    for (const request of ordered) {
      if (step.tokensLeft === 0 || step.outOfTime) break;
      if (request.status === 'running') this.scheduleRunning(request, step); // else preempted earlier in this pass
    }

    // Then waiting requests in arrival order, head of line first (no skipping, so no starvation;
    // only a request whose constraint is still compiling lets those behind it go first).
    // A step that had to preempt admits nobody: memory is tight, let running requests finish.
    this.memoryBound = step.preempted;
    for (let at = 0; !step.preempted && !step.outOfTime && at < this.waiting.length && step.tokensLeft > 0 && this.running.length < rowCap; ) {
      if (this.waiting[at]!.constraint?.status === 'compiling') at++;
      else if (!this.admit(at, step)) break;
    }

    // Drafts last: they only use what the rows above left of the token and time budgets.
    const { scheduled } = step;
    if (maxDraftTokens > 0 && step.tokensLeft > 0) {
      scheduleDrafts(scheduled, { stepCost: this.stepCost, speculation, maxDraftTokens, contextLimit: this.contextLimit, budgetTokens: step.tokensLeft, target: step.sizer.target }, this.kv, this.shape);
    }

    const stepIndex = this.nextStepIndex++;
    const rows: StepRow[] = scheduled.map((entry) => planRow(entry, this.kv));
    const budget = step.sizer.event(scheduled.length > 0 ? shapeOf(scheduled, this.shape) : null);
    this.inFlight = { stepIndex, entries: scheduled, budget };
    return { stepIndex, rows };
  }

  /** Schedules a running request's next tokens (a chunk as the time budget allows), preempting the latest arrivals for its KV. */
  private scheduleRunning(request: Request, step: StepInProgress): void {
    const isChunk = remaining(request) !== 1;
    const timeLimit = isChunk ? step.sizer.chunkLimit(request.numComputedTokens, step.prefillTokens, () => shapeOf(step.scheduled, this.shape)) : Infinity;
    if (timeLimit === 0) {
      step.outOfTime = true; // chunks follow every decode row: later ones wait, in arrival order
      return;
    }
    const numNewTokens = Math.min(remaining(request), step.tokensLeft, timeLimit);
    while (request.status === 'running' && this.kv.allocateSlots(request, numNewTokens) === null) {
      const victim = this.running[this.running.length - 1];
      if (victim === request && this.running.length === 1) {
        // capacity checks make this unreachable: a lone request always fits the empty pool
        throw new Error(`request ${request.requestId} does not fit an otherwise empty KV pool`);
      }
      step.tokensLeft += this.preempt(victim, step.scheduled);
      step.preempted = true;
    }
    if (request.status !== 'running') return;
    step.scheduled.push({ request, numNewTokens, drafts: NO_DRAFTS });
    step.tokensLeft -= numNewTokens;
    if (isChunk) step.prefillTokens += numNewTokens;
  }

  /** Admits the waiting request at `at` (the first not compiling) from its cached prefix on, if the time budget and the KV pool let it; false if not. */
  private admit(at: number, step: StepInProgress): boolean {
    const request = this.waiting[at]!;
    const cachedPrefix = this.kv.findCachedPrefix(request.tokenIds);
    const numCachedTokens = cachedPrefix.length * this.kv.blockSize;
    const timeLimit = step.sizer.chunkLimit(numCachedTokens, step.prefillTokens, () => shapeOf(step.scheduled, this.shape));
    if (timeLimit === 0) return false;
    const numNewTokens = Math.min(request.numTokens - numCachedTokens, step.tokensLeft, timeLimit);
    if (this.kv.allocateSlots(request, numNewTokens, cachedPrefix) === null) {
      this.memoryBound = true;
      return false;
    }
    this.waiting.splice(at, 1);
    request.status = 'running';
    request.numComputedTokens = numCachedTokens;
    if (request.numPreemptions === 0) request.numCachedTokens = numCachedTokens;
    insertByArrival(this.running, request);
    step.scheduled.push({ request, numNewTokens, drafts: NO_DRAFTS });
    step.tokensLeft -= numNewTokens;
    step.prefillTokens += numNewTokens;
    return true;
  }

  /**
   * The plan's constrained sampling rows and the fill of their bitmasks (constraints.ts
   * fillRowBitmask) from their matchers, for the runner to call while its forward runs
   * (StepMaskFill); undefined when no row is constrained.
   */
  constraintMasks(plan: StepPlan): StepMaskFill | undefined {
    return this.constraints.masks(plan, this.inFlight?.stepIndex === plan.stepIndex ? this.inFlight.entries : []);
  }

  /** Applies a step's result: advances computed tokens, appends samples, ends finished requests. */
  update(plan: StepPlan, result: StepResult): StepOutput {
    const budget = this.inFlight?.budget;
    const entries = this.takeInFlight(plan);
    if (result.sampledIds.length < entries.length) throw new Error('fewer sampled ids than rows');
    const rows: StepRowEvent[] = [];
    let numTokens = 0;
    let draftOffset = 0;
    const verified: Request[] = [];
    let numAcceptedInStep = 0;
    entries.forEach(({ request, numNewTokens, drafts }, i) => {
      const row = rowEvent(request, numNewTokens - drafts.length);
      row.numTokens = numNewTokens;
      numTokens += numNewTokens;
      // [drafts.length] ids sampled after each draft: this row's slice of result.draftSampledIds
      const draftIds = result.draftSampledIds?.subarray(draftOffset, draftOffset + drafts.length) ?? NO_TOKENS;
      draftOffset += drafts.length;
      const sampled = !request.cancelRequested && draftIds.length >= drafts.length && plan.rows[i].sample;
      const run = sampled ? appendSamples(request, result.sampledIds[i], drafts, draftIds, this.contextLimit) : null;
      // the one move of the computed tokens: all it fed, less the drafts it rejected (their KV is overwritten later)
      const numAccepted = run?.numAccepted ?? 0;
      numAcceptedInStep += numAccepted;
      request.numComputedTokens += numNewTokens - (drafts.length - numAccepted);
      if (drafts.length > 0) {
        row.numDrafted = drafts.length;
        row.numAccepted = numAccepted;
        if (run) {
          recordVerification(request.draftStats, numAccepted, run.rejected);
          verified.push(request);
          this.kv.releaseRejectedSlots(request); // tail blocks only rejected drafts used
        }
      }
      this.kv.cacheComputedBlocks(request);
      if (request.cancelRequested) {
        this.finish(request, 'cancelled');
        row.finishReason = 'cancelled';
      } else if (draftIds.length < drafts.length) {
        this.finish(request, 'error', `runner returned ${draftIds.length} draft ids for ${drafts.length} drafts`);
        row.finishReason = 'error';
      } else if (run) {
        this.endSampledRow(request, row, run, result.logprobs?.[i]);
      }
      rows.push(row);
    });
    const decodeOnly = rows.every((r) => r.kind === 'decode');
    this.payoff.note(plan.stepIndex, verified, entries.length, numAcceptedInStep, decodeOnly);
    return this.output(plan.stepIndex, rows, numTokens, budget);
  }

  /**
   * The engine's report of a step that ran: the cost model learns its time, and each request that
   * verified drafts in it backs off or draws nearer ('auto', speculation.ts) by whether the step
   * made more tokens per ms than its rows without drafts would have. Judged on decode-only steps
   * (every row a decode or verify row), the ones a decode-only prediction prices.
   */
  observeStep(plan: StepPlan, elapsedMs: number): void {
    this.payoff.judge(plan, elapsedMs, this.stepCost);
    this.stepCost.observePlan(plan, elapsedMs);
  }

  /** Ends a sampled row's turn where its tokens, its constraint or a rule says so (row-samples.ts fills the row). */
  private endSampledRow(request: Request, row: StepRowEvent, run: SampledRun, logprobs: readonly SampledLogprobs[] | undefined): void {
    fillSampledRow(request, row, run, this.tokenizer, logprobs);
    if (run.finishReason) {
      this.finish(request, run.finishReason, run.error);
      row.finishReason = run.finishReason;
    }
  }

  /** The runner failed: every request of the step ends with an error; the rest carry on. */
  abortStep(plan: StepPlan, error: unknown): StepOutput {
    const message = error instanceof Error ? error.message : String(error);
    const budget = this.inFlight?.budget;
    const rows = this.takeInFlight(plan).map(({ request, numNewTokens }) => {
      const row = rowEvent(request, 0);
      row.numTokens = numNewTokens;
      this.finish(request, 'error', message);
      row.finishReason = 'error' as FinishReason;
      return row;
    });
    return this.output(plan.stepIndex, rows, 0, budget);
  }

  /**
   * The engine itself failed (not the runner), or its owner gives up on the runner: every request
   * ends with the error, the step in flight included, so no turn waits on a loop that cannot step.
   */
  failAll(error: unknown): FinishedEvent[] {
    const message = error instanceof Error ? error.message : String(error);
    this.inFlight = null;
    for (const request of [...this.waiting, ...this.running]) this.finish(request, 'error', message);
    const finished = this.pendingFinished;
    this.pendingFinished = [];
    return finished;
  }

  private takeInFlight(plan: StepPlan): ScheduledEntry[] {
    const flight = this.inFlight;
    if (!flight || flight.stepIndex !== plan.stepIndex) throw new Error(`step ${plan.stepIndex} is not the one in flight`);
    this.inFlight = null;
    return flight.entries;
  }

  private output(stepIndex: number, rows: StepRowEvent[], numTokens: number, budget: StepBudgetEvent | undefined): StepOutput {
    const finished = this.pendingFinished;
    this.pendingFinished = [];
    return { stepIndex, rows, finished, numTokens, ...(budget ? { budget } : {}) };
  }

  /** The waiting requests in arrival order, each with why it waits (for StepEvents and the UI). */
  waitingReasons(): WaitingEvent[] {
    return this.waiting.map((request) => ({
      sessionId: request.sessionId,
      requestId: request.requestId,
      reason: request.constraint?.status === 'compiling' ? 'grammar' : request.numPreemptions > 0 ? 'preempted' : this.memoryBound ? 'kv-full' : 'queued',
    }));
  }

  /** Frees every running request's blocks; they recompute from their tokens when readmitted. */
  evictAll(): number {
    if (this.inFlight) throw new Error(`step ${this.inFlight.stepIndex} is still in flight`);
    const victims = [...this.running].reverse();
    for (const victim of victims) this.preempt(victim, []);
    return victims.length;
  }

  /** Frees a running request's blocks and queues it for recompute; returns the budget it gave back. */
  private preempt(victim: Request, scheduled: ScheduledEntry[]): number {
    this.kv.free(victim.requestId);
    remove(this.running, victim);
    victim.status = 'waiting';
    victim.numComputedTokens = 0;
    victim.numPreemptions++;
    insertByArrival(this.waiting, victim);
    const at = scheduled.findIndex((e) => e.request === victim);
    if (at < 0) return 0;
    return scheduled.splice(at, 1)[0].numNewTokens;
  }

  private finish(request: Request, reason: FinishReason, error?: string): void {
    if (request.status === 'finished') return;
    remove(this.waiting, request);
    remove(this.running, request);
    this.kv.free(request.requestId);
    this.requests.delete(request.requestId);
    request.status = 'finished';
    request.constraint?.dispose();
    request.finishReason = reason;
    request.error = error;
    this.pendingFinished.push({
      sessionId: request.sessionId,
      requestId: request.requestId,
      reason,
      newText: request.flushText(),
      ...(error !== undefined ? { error } : {}),
    });
  }
}

function remove(list: Request[], request: Request): void {
  const at = list.indexOf(request);
  if (at >= 0) list.splice(at, 1);
}

function insertByArrival(list: Request[], request: Request): void {
  let at = list.length;
  while (at > 0 && list[at - 1].arrivalSeq > request.arrivalSeq) at--;
  list.splice(at, 0, request);
}
