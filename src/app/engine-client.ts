// The UI's only door to the engine worker: starts it and wraps EngineApi with comlink.
// Not a store and not a component; callbacks are proxied here so components never see comlink.
import * as Comlink from 'comlink';
import type { EngineApi, EngineNotice, GpuInfo, LoadProgress, ModelInfo, ModelSource, SelfCheckResult, SendInput, SessionId, SessionOptions } from '../protocol/api';
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
  /** Calls onStep once per engine step; resolves to a function that unsubscribes. */
  subscribe(onStep: (event: StepEvent) => void): Promise<() => Promise<void>>;
  /** Engine notices (GPU lost, restored); resolves to a function that unsubscribes. */
  subscribeNotices(onNotice: (notice: EngineNotice) => void): Promise<() => Promise<void>>;
  terminate(): void;
}

function startEngine(): EngineClient {
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const remote = Comlink.wrap<EngineApi>(worker);
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
    async subscribe(onStep) {
      const subscriptionId = await remote.subscribe(Comlink.proxy(onStep));
      return () => remote.unsubscribe(subscriptionId);
    },
    async subscribeNotices(onNotice) {
      const subscriptionId = await remote.subscribeNotices(Comlink.proxy(onNotice));
      return () => remote.unsubscribe(subscriptionId);
    },
    terminate() {
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
