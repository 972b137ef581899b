// EngineCore: the step loop (schedule -> execute -> update) with one owner, one StepEvent per step,
// yielding to the event loop between steps and idling when nothing is runnable. No worker or UI wiring.
import { BlockPool } from './block-pool';
import type { TurnMessages } from './chat-messages';
import { ConstraintCache, type ConstraintCompiler } from './constraints';
import type { EngineMode, StepEvent } from './events';
import { KVCacheManager } from './kv-manager';
import { Listeners } from './listeners';
import { Scheduler, type StepOutput } from './scheduler';
import type { SessionOptions } from './session-options';
import { SessionRegistry, type TurnResult } from './sessions';
import { validateSpeculation, type Speculation } from './speculation';
import { validateStepBudget, type StepBudget } from './step-budget';
import { DEFAULT_MAX_ROWS, type ChatTemplate, type ModelRunner, type StepResult, type Tokenizer } from './types';

export interface EngineCoreOptions {
  runner: ModelRunner;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  /** Sessions are `s<n>` from this n (default 1): a host replacing its engine never reuses an id. */
  firstSessionNumber?: number;
  /** Token budget per step (default 512, at most runner.maxTokensPerStep). */
  maxTokensPerStep?: number;
  /** Row cap per step in batched mode (default DEFAULT_MAX_ROWS, at most runner.maxRows). */
  maxRows?: number;
  enablePrefixCaching?: boolean;
  mode?: EngineMode;
  /** Step-time budget (default null: off, the token budget alone sizes prefill chunks). */
  stepBudget?: StepBudget | null;
  /**
   * Speculative decoding, engine-wide (default 'auto'); each session's setting applies under it,
   * and a runner without maxDraftTokens is never sent drafts.
   */
  speculation?: Speculation;
  /**
   * Compiles output constraints for this model's vocabulary (XGrammar's in src/model); absent: a
   * session with a constraint has its turns end with an error.
   */
  constraints?: ConstraintCompiler;
  /** Clock in ms (default performance.now). */
  now?: () => number;
  /** Steps only run when step() is called (tests drive the engine one step at a time). */
  manualSteps?: boolean;
}

export type StepListener = (event: StepEvent) => void;

export class EngineCore {
  runner: ModelRunner;
  readonly pool: BlockPool;
  readonly kv: KVCacheManager;
  readonly scheduler: Scheduler;
  readonly sessions: SessionRegistry;
  /** Compiled output constraints of this model, shared by every request (null: none can be compiled). */
  readonly constraints: ConstraintCache | null;
  private readonly now: () => number;
  private readonly manualSteps: boolean;
  private readonly listeners = new Listeners<StepEvent>('step');
  private nextListenerId = 1;
  /**
   * The loop while it runs: the one owner of stepping. Every step of a self-running engine starts
   * inside it, so at most one is ever in flight; whoever must wait for the step in flight awaits it.
   */
  private running: Promise<void> | null = null;
  /** Something changed since the loop last looked (new work, a cancel, a step that progressed). */
  private wanted = false;
  /** A manual step() in flight (manual mode has no loop). */
  private manualStep: Promise<unknown> | null = null;
  private disposed = false;
  /** While set, no step starts (a runner is being replaced); sessions keep their state. */
  private suspended = false;

  constructor(options: EngineCoreOptions) {
    const runner = options.runner;
    this.runner = runner;
    this.now = options.now ?? (() => performance.now());
    this.manualSteps = options.manualSteps ?? false;
    this.kv = new KVCacheManager(
      runner.kvGroups.map((group) => ({ pool: new BlockPool(group.numBlocks, runner.blockSize), window: group.window })),
      { enablePrefixCaching: options.enablePrefixCaching },
    );
    this.pool = this.kv.pool;
    this.constraints = options.constraints ? new ConstraintCache(options.constraints) : null;
    this.scheduler = new Scheduler(this.kv, options.tokenizer, {
      maxTokensPerStep: Math.min(options.maxTokensPerStep ?? 512, runner.maxTokensPerStep),
      maxRows: Math.min(options.maxRows ?? DEFAULT_MAX_ROWS, runner.maxRows),
      mode: options.mode,
      maxContextTokens: runner.maxContext,
      maxDraftTokens: runner.maxDraftTokens ?? 0,
      speculation: validateSpeculation(options.speculation ?? 'auto'),
      stepBudget: validateStepBudget(options.stepBudget ?? null),
      constraints: this.constraints,
    });
    this.scheduler.onConstraintSettled = () => this.wake();
    this.sessions = new SessionRegistry(this.scheduler, options.tokenizer, options.chatTemplate, options.firstSessionNumber);
  }

  get mode(): EngineMode {
    return this.scheduler.settings.mode;
  }

  /** Takes effect from the next step; requests keep their blocks and progress. */
  setMode(mode: EngineMode): void {
    this.scheduler.configure({ mode });
  }

  get stepBudget(): StepBudget | null {
    return this.scheduler.settings.stepBudget;
  }

  /** Takes effect from the next step; throws InvalidOptionError naming a number out of bounds. */
  setStepBudget(budget: StepBudget | null): void {
    this.scheduler.configure({ stepBudget: validateStepBudget(budget) });
  }

  get speculation(): Speculation {
    return this.scheduler.settings.speculation;
  }

  /** Takes effect from the next step; throws InvalidOptionError for a value out of bounds. */
  setSpeculation(speculation: Speculation): void {
    this.scheduler.configure({ speculation: validateSpeculation(speculation) });
  }

  subscribe(listener: StepListener): () => void {
    const id = this.listeners.add(this.nextListenerId++, listener);
    return () => this.listeners.delete(id);
  }

  createSession(options: SessionOptions = {}): string {
    return this.sessions.create(options);
  }

  send(sessionId: string, input: string | ArrayLike<number> | TurnMessages): string {
    const requestId = this.sessions.send(sessionId, input);
    this.wake();
    return requestId;
  }

  cancel(sessionId: string): void {
    this.sessions.cancel(sessionId);
    this.wake();
  }

  resetSession(sessionId: string): void {
    this.sessions.reset(sessionId);
    this.wake();
  }

  closeSession(sessionId: string): void {
    this.sessions.close(sessionId);
    this.wake();
  }

  waitForTurn(sessionId: string): Promise<TurnResult> {
    return this.sessions.waitForTurn(sessionId);
  }

  /** Resolves once the loop has stopped: no step in flight and none runnable (at once if so now). */
  async whenIdle(): Promise<void> {
    while (this.running || this.manualStep) await (this.running ?? this.manualStep);
  }

  /** Manual mode only: runs one step if any is runnable; returns its event (null when idle). */
  step(): Promise<StepEvent | null> {
    if (!this.manualSteps) throw new Error('step() drives a manual-stepping engine; this one runs its own loop');
    if (this.manualStep) throw new Error('a step is already running: await the previous step() first');
    const done = (async () => {
      try {
        return await this.runStep();
      } finally {
        this.manualStep = null; // before the caller's continuation, so it may step again at once
      }
    })();
    this.manualStep = done;
    return done;
  }

  /**
   * Stops starting steps, e.g. when the GPU device is lost: the step in flight still ends (its
   * rows fail if the runner fails), nothing else runs until replaceRunner().
   */
  suspend(): void {
    this.suspended = true;
  }

  /**
   * Carries on with a new runner whose KV is empty (a re-created GPU device): every request
   * holding blocks is evicted to recompute from its tokens, and the prefix cache is forgotten,
   * since the blocks it names held KV that no longer exists. Same pool shape required.
   */
  async replaceRunner(runner: ModelRunner): Promise<void> {
    const groupsText = (r: ModelRunner) => r.kvGroups.map((g) => `${g.numBlocks} blocks${g.window === null ? '' : ` (window ${g.window})`}`).join(' + ');
    if (runner.blockSize !== this.runner.blockSize || groupsText(runner) !== groupsText(this.runner)) {
      throw new Error(`a replacement runner needs the same KV pools (${groupsText(this.runner)} of ${this.runner.blockSize} positions)`);
    }
    this.suspended = true;
    await this.whenIdle(); // the step in flight ends on the old runner; none starts after it
    this.runner = runner;
    this.scheduler.configure({ maxDraftTokens: runner.maxDraftTokens ?? 0 });
    this.scheduler.evictAll();
    for (const group of this.kv.groups) group.pool.clearCache();
    this.scheduler.stepCost.reset(); // a new device need not be as fast, and its first step compiles
    this.suspended = false;
    this.wake();
  }

  /**
   * Ends every turn with `error`, for an owner that cannot carry on (a runner that could not be
   * rebuilt): stops stepping, waits out the step in flight, then answers every waiter. Sessions
   * stay; new turns run once a runner is replaced.
   */
  async failAll(error: unknown): Promise<void> {
    this.suspended = true;
    await this.whenIdle();
    this.sessions.applyFinished(this.scheduler.failAll(error));
  }

  /**
   * Stops the loop; sessions stay as they are. Resolves once the step in flight (if any) has
   * ended, so the owner may then dispose the runner it ran on.
   */
  dispose(): Promise<void> {
    this.disposed = true;
    this.listeners.clear();
    return this.whenIdle();
  }

  private async runStep(): Promise<StepEvent | null> {
    // manual steps wait out a compile when it is all there is (the loop is woken by it instead)
    for (let settling = this.scheduler.whenConstraintSettles(); this.manualSteps && settling && !this.scheduler.hasWork(); settling = this.scheduler.whenConstraintSettles()) await settling;
    if (this.disposed || this.suspended || !this.scheduler.hasWork()) return null;
    const startedAtMs = this.now();
    const plan = this.scheduler.schedule();
    let output: StepOutput;
    let gpuTimeMs: number | undefined;
    let ran = false;
    if (plan.rows.length === 0) {
      output = this.scheduler.update(plan, { sampledIds: new Int32Array(0) });
    } else {
      let result: StepResult | undefined;
      let failure: unknown;
      try {
        // the masks are filled while the runner's forward runs; it samples only once they are in
        const masks = this.scheduler.constraintMasks(plan);
        const executed = await this.runner.execute(plan, masks);
        if (masks?.rows.some((r) => !plan.rows[r]!.tokenBitmask)) throw new Error(`the runner sampled step ${plan.stepIndex} without filling its constraint masks`);
        result = executed;
      } catch (err) {
        failure = err;
      }
      gpuTimeMs = result?.gpuTimeMs;
      ran = result !== undefined;
      output = result ? this.scheduler.update(plan, result) : this.scheduler.abortStep(plan, failure);
    }
    this.sessions.applyStep(output);
    const elapsedMs = this.now() - startedAtMs;
    // the cost model learns from steps that ran; a failed one says nothing about the runner's speed
    if (ran) this.scheduler.observeStep(plan, elapsedMs);
    const kv = this.pool.stats();
    const event: StepEvent = {
      stepIndex: output.stepIndex,
      startedAtMs,
      elapsedMs,
      ...(gpuTimeMs !== undefined ? { gpuTimeMs } : {}),
      rows: output.rows,
      numTokens: output.numTokens,
      finished: output.finished,
      kvBlocksUsed: kv.numUsed,
      kvBlocksFree: kv.numFree,
      kvBlocksShared: kv.numShared,
      kvBlocksCached: kv.numCached,
      kvBlocksTotal: kv.numBlocks,
      kvGroups: this.kv.groups.map(({ pool, window }) => {
        const stats = pool.stats();
        return { window, used: stats.numUsed, total: stats.numBlocks };
      }),
      queueDepth: this.scheduler.numWaiting,
      waiting: this.scheduler.waitingReasons(),
      numRunning: this.scheduler.numRunning,
      mode: this.scheduler.settings.mode,
      ...(output.budget ? { stepBudget: output.budget } : {}),
    };
    this.listeners.emit(event); // a faulty subscriber is logged and skipped, never stalls a session
    return event;
  }

  /** Asks the loop to look again; starts it only when none runs. Never starts a step itself. */
  private wake(): void {
    if (this.manualSteps || this.disposed) return;
    this.wanted = true;
    this.running ??= this.loop();
  }

  /**
   * The loop: while something changed, yield a macrotask, then run one step if there is work. A
   * step that made progress asks again; one that could not (every request waits on memory nobody
   * will free) leaves the loop idle until new work, a cancel or a close wakes it.
   */
  private async loop(): Promise<void> {
    try {
      // awaited first, so this function never reaches its finally before wake() has stored it
      await yieldToEvents();
      while (this.wanted && !this.disposed && !this.suspended) {
        this.wanted = false;
        if (this.scheduler.hasWork()) {
          try {
            const event = await this.runStep();
            const madeProgress = event !== null && (event.rows.length > 0 || event.finished.length > 0);
            if (madeProgress) this.wanted = true;
          } catch (err) {
            // runner failures end their rows inside runStep(); this is the engine's own fault, so
            // every turn ends with it rather than wait on a loop that would fail the same way again
            console.error('engine step failed', err);
            this.sessions.applyFinished(this.scheduler.failAll(err));
            this.wanted = true;
          }
        }
        await yieldToEvents();
      }
    } finally {
      this.running = null;
    }
  }
}

type Yield = (callback: () => void) => void;

/** Resolves after pending events (messages, timers, I/O) have been handled. */
function yieldToEvents(): Promise<void> {
  return new Promise((resolve) => yieldThen(resolve));
}

/**
 * Runs `callback` after pending events are handled. setTimeout(0) is clamped to 4 ms after a few
 * nested calls in browsers, far too slow per step, so: setImmediate in Node, else a MessageChannel.
 */
const yieldThen: Yield = (() => {
  const g = globalThis as { setImmediate?: (callback: () => void) => unknown };
  if (typeof g.setImmediate === 'function') {
    const setImmediate = g.setImmediate;
    return (callback: () => void) => void setImmediate(callback);
  }
  if (typeof MessageChannel === 'function') {
    const channel = new MessageChannel();
    const queue: Array<() => void> = [];
    channel.port1.onmessage = () => queue.shift()?.();
    return (callback: () => void) => {
      queue.push(callback);
      channel.port2.postMessage(null);
    };
  }
  return (callback: () => void) => void setTimeout(callback, 0);
})();
