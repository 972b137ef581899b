// The UI's only door to the engine worker: starts it and wraps EngineApi with comlink.
// Not a store and not a component; callbacks are proxied here so components never see comlink.
import * as Comlink from 'comlink';
import type { EngineApi, EngineNotice, GpuInfo, LoadProgress, ModelInfo, ModelSource, SelfCheckResult, SendInput, SessionId, SessionOptions, StepBudget } from '../protocol/api';
import type { EngineMode, StepEvent, TurnResult } from '../protocol/events';

export interface EngineClient {
  gpuInfo(): Promise<GpuInfo>;
  selfCheck(): Promise<SelfCheckResult>;
  loadModel(source: ModelSource, onProgress?: (progress: LoadProgress) => void): Promise<ModelInfo>;
  createSession(options?: SessionOptions): Promise<SessionId>;
  send(sessionId: SessionId, input: SendInput): Promise<void>;
  cancel(sessionId: SessionId): Promise<void>;
  closeSession(sessionId: SessionId): Promise<void>;
  resetSession(sessionId: SessionId): Promise<void>;
  /** Resolves when the session's current turn ends, with its full text. */
  waitForTurn(sessionId: SessionId): Promise<TurnResult>;
  setMode(mode: EngineMode): Promise<void>;
  /** The step-time budget (null: off); see EngineApi.setStepBudget. */
  setStepBudget(budget: StepBudget | null): Promise<void>;
  /** Calls onStep once per engine step; resolves to a function that unsubscribes. */
  subscribe(onStep: (event: StepEvent) => void): Promise<() => Promise<void>>;
  /** Debug hook: stops the worker as a crash would. */
  debugCloseWorker(): Promise<void>;
  /** Calls onDead once if the worker stops answering the watchdog's pings. */
  onUnresponsive(onDead: () => void): void;
  /** Engine notices (GPU lost, restored); resolves to a function that unsubscribes. */
  subscribeNotices(onNotice: (notice: EngineNotice) => void): Promise<() => Promise<void>>;
  terminate(): void;
}

/** How often the page pings the worker, and how long an unanswered ping may wait. The engine
 *  yields between steps and GPU work is asynchronous, so only a dead worker misses 20 s; a
 *  `?watchdogMs=` page parameter shortens it (tests). */
const PING_EVERY_MS = 1000;
const watchdogMs = (): number => Number(new URLSearchParams(globalThis.location?.search ?? '').get('watchdogMs')) || 20_000;

function startEngine(): EngineClient {
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const remote = Comlink.wrap<EngineApi>(worker);
  const onDead: Array<() => void> = [];
  let pendingSinceMs: number | null = null;
  let dead = false;
  const timeoutMs = watchdogMs();
  const watchdog = setInterval(() => {
    if (dead) return;
    if (pendingSinceMs !== null) {
      if (performance.now() - pendingSinceMs < timeoutMs) return;
      dead = true;
      clearInterval(watchdog);
      for (const callback of onDead) callback();
      return;
    }
    pendingSinceMs = performance.now();
    void remote.ping().then(() => (pendingSinceMs = null));
  }, PING_EVERY_MS);
  return {
    gpuInfo: () => remote.gpuInfo(),
    selfCheck: () => remote.selfCheck(),
    loadModel: (source, onProgress) => remote.loadModel(source, onProgress ? Comlink.proxy(onProgress) : undefined),
    createSession: (options) => remote.createSession(options),
    // Token arrays are transferred, not copied; the caller must not reuse them.
    send: (sessionId, input) => remote.send(sessionId, typeof input === 'string' ? input : Comlink.transfer(input, [input.buffer])),
    cancel: (sessionId) => remote.cancel(sessionId),
    closeSession: (sessionId) => remote.closeSession(sessionId),
    resetSession: (sessionId) => remote.resetSession(sessionId),
    waitForTurn: (sessionId) => remote.waitForTurn(sessionId),
    setMode: (mode) => remote.setMode(mode),
    setStepBudget: (budget) => remote.setStepBudget(budget),
    async subscribe(onStep) {
      const subscriptionId = await remote.subscribe(Comlink.proxy(onStep));
      return () => remote.unsubscribe(subscriptionId);
    },
    debugCloseWorker: () => remote.debugCloseWorker(),
    onUnresponsive(callback) {
      onDead.push(callback);
    },
    async subscribeNotices(onNotice) {
      const subscriptionId = await remote.subscribeNotices(Comlink.proxy(onNotice));
      return () => remote.unsubscribe(subscriptionId);
    },
    terminate() {
      clearInterval(watchdog);
      remote[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}

let client: EngineClient | undefined;

/** The page's single engine worker, started on first use. */
export function getEngineClient(): EngineClient {
  client ??= startEngine();
  return client;
}

/** Ends the current worker (dead or not) and starts a fresh one. */
export function restartEngineClient(): EngineClient {
  client?.terminate();
  client = startEngine();
  return client;
}
