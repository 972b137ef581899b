// EngineCore: the step loop (schedule -> execute -> update), one StepEvent per step, yielding to
// the event loop between steps and idling when nothing is runnable. No worker or UI wiring here.
import { BlockPool } from './block-pool';
import type { EngineMode, StepEvent } from './events';
import { KVCacheManager } from './kv-manager';
import { Scheduler, type StepOutput } from './scheduler';
import { SessionRegistry, type SessionOptions, type TurnResult } from './sessions';
import { validateStepBudget, type StepBudget } from './step-budget';
import type { ChatTemplate, ModelRunner, StepResult, Tokenizer } from './types';

export interface EngineCoreOptions {
  runner: ModelRunner;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  /** Token budget per step (default 512, at most runner.maxTokensPerStep). */
  maxTokensPerStep?: number;
  /** Row cap per step in batched mode (default DEFAULT_MAX_ROWS, at most runner.maxRows). */
  maxRows?: number;
  enablePrefixCaching?: boolean;
  mode?: EngineMode;
  /** Step-time budget (default null: off, the token budget alone sizes prefill chunks). */
  stepBudget?: StepBudget | null;
  /** Clock in ms (default performance.now). */
  now?: () => number;
  /** Steps only run when step() is called (tests drive the engine one step at a time). */
  manualSteps?: boolean;
}

export type StepListener = (event: StepEvent) => void;

/** Batched mode's row cap unless the caller sets one; runners size their per-row buffers to it. */
export const DEFAULT_MAX_ROWS = 16;

export class EngineCore {
  runner: ModelRunner;
  readonly pool: BlockPool;
  readonly kv: KVCacheManager;
  readonly scheduler: Scheduler;
  readonly sessions: SessionRegistry;
  private readonly now: () => number;
  private readonly manualSteps: boolean;
  private readonly listeners = new Set<StepListener>();
  private idleWaiters: Array<() => void> = [];
  private loopScheduled = false;
  private stepping = false;
  private disposed = false;
  /** While set, no step starts (a runner is being replaced); sessions keep their state. */
  private suspended = false;
  private stepDone: Promise<unknown> = Promise.resolve();

  constructor(options: EngineCoreOptions) {
    const runner = options.runner;
    this.runner = runner;
    this.now = options.now ?? (() => performance.now());
    this.manualSteps = options.manualSteps ?? false;
    this.pool = new BlockPool(runner.numBlocks, runner.blockSize);
    this.kv = new KVCacheManager(this.pool, { enablePrefixCaching: options.enablePrefixCaching });
    this.scheduler = new Scheduler(this.kv, options.tokenizer, {
      maxTokensPerStep: Math.min(options.maxTokensPerStep ?? 512, runner.maxTokensPerStep),
      maxRows: Math.min(options.maxRows ?? DEFAULT_MAX_ROWS, runner.maxRows),
      mode: options.mode,
      maxContextTokens: runner.maxContext,
    });
    this.scheduler.stepBudget = validateStepBudget(options.stepBudget ?? null);
    this.scheduler.stepCost.reset(runner.tokenTile);
    this.sessions = new SessionRegistry(this.scheduler, options.tokenizer, options.chatTemplate, this.now);
  }

  get mode(): EngineMode {
    return this.scheduler.mode;
  }

  /** Takes effect from the next step; requests keep their blocks and progress. */
  setMode(mode: EngineMode): void {
    this.scheduler.mode = mode;
  }

  get stepBudget(): StepBudget | null {
    return this.scheduler.stepBudget;
  }

  /** Takes effect from the next step; throws InvalidOptionError naming a number out of bounds. */
  setStepBudget(budget: StepBudget | null): void {
    this.scheduler.stepBudget = validateStepBudget(budget);
  }

  subscribe(listener: StepListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  createSession(options: SessionOptions = {}): string {
    return this.sessions.create(options);
  }

  send(sessionId: string, input: string | ArrayLike<number>): string {
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

  /** Resolves once no step is runnable (at once if none is). */
  whenIdle(): Promise<void> {
    if (this.disposed || (!this.stepping && !this.loopScheduled && !this.scheduler.hasWork())) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Runs one step if any is runnable; returns its event (null when idle). */
  step(): Promise<StepEvent | null> {
    const done = this.runStep();
    this.stepDone = done.catch(() => undefined);
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
    if (runner.numBlocks !== this.runner.numBlocks || runner.blockSize !== this.runner.blockSize) {
      throw new Error(`a replacement runner needs the same KV pool (${this.runner.numBlocks} blocks of ${this.runner.blockSize})`);
    }
    this.suspended = true;
    await this.stepDone;
    this.runner = runner;
    this.scheduler.evictAll();
    this.pool.clearCache();
    this.scheduler.stepCost.reset(runner.tokenTile); // a new device need not be as fast, and its first step compiles
    this.suspended = false;
    this.wake();
  }

  private async runStep(): Promise<StepEvent | null> {
    if (this.stepping) throw new Error('a step is already running');
    if (this.disposed || this.suspended || !this.scheduler.hasWork()) return null;
    this.stepping = true;
    try {
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
          result = await this.runner.execute(plan);
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
      if (ran) this.scheduler.stepCost.observePlan(plan, elapsedMs);
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
        queueDepth: this.scheduler.numWaiting,
        waiting: this.scheduler.waitingReasons(),
        numRunning: this.scheduler.numRunning,
        mode: this.scheduler.mode,
        ...(output.budget ? { stepBudget: output.budget } : {}),
      };
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch (err) {
          // a faulty subscriber must not stall every session
          console.error('step listener failed', err);
        }
      }
      return event;
    } finally {
      this.stepping = false;
    }
  }

  /** Stops the loop; sessions stay as they are. The runner is the owner's to dispose. */
  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
    this.resolveIdle();
  }

  private wake(): void {
    if (this.manualSteps || this.disposed || this.suspended || this.loopScheduled || this.stepping) return;
    this.loopScheduled = true;
    yieldThen(() => void this.tick());
  }

  /** One loop turn: a step, then the next turn after a yield; idles when there is no work. */
  private async tick(): Promise<void> {
    this.loopScheduled = false;
    if (!this.disposed && !this.suspended && this.scheduler.hasWork()) {
      const event = await this.step();
      // a plan with no rows and nothing finished means nothing could run: wait for new work
      const madeProgress = event !== null && (event.rows.length > 0 || event.finished.length > 0);
      if (madeProgress && this.scheduler.hasWork() && !this.disposed) {
        this.loopScheduled = true;
        yieldThen(() => void this.tick());
        return;
      }
    }
    this.resolveIdle();
  }

  private resolveIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

type Yield = (callback: () => void) => void;

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
