// The UI's only door to the engine worker: starts it, wraps EngineApi (src/lib/remote.ts) and adds
// the watchdog. Not a store and not a component; components see plain async methods, never comlink.
import type { EngineApi } from '../protocol/api';
import { wrapEndpoint } from '../lib/remote';

/** The EngineApi verbs the page uses, with plain callbacks; token arrays sent are transferred. */
export type EngineClient = Pick<
  EngineApi,
  | 'gpuInfo'
  | 'selfCheck'
  | 'loadModel'
  | 'createSession'
  | 'send'
  | 'cancel'
  | 'closeSession'
  | 'resetSession'
  | 'waitForTurn'
  | 'setMode'
  | 'setStepBudget'
  | 'subscribe'
  | 'subscribeNotices'
  | 'unsubscribe'
  | 'debugCloseWorker'
> & {
  /** Calls onDead once if the worker stops answering the watchdog's pings. */
  onUnresponsive(onDead: () => void): void;
  terminate(): void;
};

/** How often the page pings the worker, and how long an unanswered ping may wait. The engine
 *  yields between steps and GPU work is asynchronous, so only a dead worker misses 20 s; a
 *  `?watchdogMs=` page parameter shortens it (tests). */
const PING_EVERY_MS = 1000;
const watchdogMs = (): number => Number(new URLSearchParams(globalThis.location?.search ?? '').get('watchdogMs')) || 20_000;

function startEngine(): EngineClient {
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const onDead: Array<() => void> = [];
  let pendingSinceMs: number | null = null;
  let dead = false;
  const timeoutMs = watchdogMs();
  const remote = wrapEndpoint<EngineApi, Pick<EngineClient, 'onUnresponsive' | 'terminate'>>(worker, {
    onUnresponsive(callback) {
      onDead.push(callback);
    },
    terminate() {
      clearInterval(watchdog);
      remote.release();
      worker.terminate();
    },
  });
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
    void remote.api.ping().then(() => (pendingSinceMs = null));
  }, PING_EVERY_MS);
  return remote.api;
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
