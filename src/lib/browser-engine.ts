// How a page reaches the engine: its own dedicated worker, or the one shared worker every tab of the
// origin talks to (with a heartbeat: a shared worker never hears that a tab closed). No request logic.
import type { EngineLink } from './completions';
import { CohortEngine } from './engine';
import { linkOverEndpoint, linkOverTabPort } from './remote';

export type WorkerKind = 'dedicated' | 'shared';

export interface WorkerOptions {
  /**
   * 'auto' (default): the shared worker where SharedWorker exists and WebGPU works inside it, else
   * a dedicated worker for this page. true: the shared worker or an error. false: a dedicated worker.
   */
  shared?: boolean | 'auto';
  /** Shared worker only: this tab pings every intervalMs; silent for timeoutMs, its sessions are ended. */
  heartbeat?: { intervalMs?: number; timeoutMs?: number };
}

/**
 * Hidden tabs' timers may fire only once a minute (Chrome's intensive throttling), so the default
 * timeout outlasts that; a tab that closes normally says goodbye at once (pagehide).
 */
const DEFAULT_HEARTBEAT = { intervalMs: 5_000, timeoutMs: 90_000 };
/** Starting the shared worker and its WebGPU device; past this, 'auto' uses a dedicated worker. */
const SHARED_PROBE_TIMEOUT_MS = 30_000;

/** A CohortEngine over a worker this page started or joined. */
export class BrowserEngine extends CohortEngine {
  constructor(
    /** Which worker serves this page: 'shared' means other tabs' requests ride in the same steps. */
    readonly workerKind: WorkerKind,
    link: EngineLink,
    /** Ends this page's use of the worker and drops the comlink proxy (after any last call). */
    private readonly end: () => void,
  ) {
    super(link);
  }

  /**
   * Dedicated: ends the worker (every request fails, the GPU device and model are freed). Shared:
   * this tab leaves (its requests are cancelled); the worker and model stay for the other tabs.
   */
  terminate(): void {
    void this.dispose().catch(() => undefined);
    this.end();
  }
}

function startDedicated(): BrowserEngine {
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const remote = linkOverEndpoint(worker);
  return new BrowserEngine('dedicated', remote.link, () => {
    remote.release();
    worker.terminate();
  });
}

/** Joins (or starts) the origin's shared engine worker; rejects where WebGPU does not work in it. */
async function joinShared(heartbeat: WorkerOptions['heartbeat']): Promise<BrowserEngine> {
  const { intervalMs, timeoutMs } = { ...DEFAULT_HEARTBEAT, ...heartbeat };
  const worker = new SharedWorker(new URL('../../workers/engine.shared-worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const remote = linkOverTabPort(worker.port);
  let probeTimer: ReturnType<typeof setTimeout> | undefined;
  const failed = new Promise<never>((_, reject) => {
    worker.addEventListener('error', () => reject(new Error('the shared engine worker failed to start')), { once: true });
    probeTimer = setTimeout(() => reject(new Error(`the shared engine worker did not answer within ${SHARED_PROBE_TIMEOUT_MS} ms`)), SHARED_PROBE_TIMEOUT_MS);
  });
  try {
    const gpu = await Promise.race([remote.tab.gpuInfo(), failed]);
    if (gpu.status !== 'ok') throw new Error(`no WebGPU in the shared worker: ${gpu.message}`);
    await remote.tab.hello(timeoutMs);
  } catch (err) {
    remote.release();
    worker.port.close();
    throw err;
  } finally {
    clearTimeout(probeTimer);
  }
  const beat = setInterval(() => void remote.link.ping().catch(() => undefined), intervalMs);
  // A page put in the back-forward cache may come back: the heartbeat timeout decides for it.
  const onPageHide = (event: PageTransitionEvent) => void (event.persisted || remote.tab.goodbye().catch(() => undefined));
  addEventListener('pagehide', onPageHide);
  const leave = () => {
    clearInterval(beat);
    removeEventListener('pagehide', onPageHide);
    // the goodbye goes before the proxy's release, which closes the port on the worker's side
    void remote.tab.goodbye().catch(() => undefined).finally(() => {
      remote.release();
      worker.port.close();
    });
  };
  return new BrowserEngine('shared', remote.link, leave);
}

/** The engine worker createEngine() uses, per `options.shared`. */
export async function startBrowserEngine(options: WorkerOptions): Promise<BrowserEngine> {
  const shared = options.shared ?? 'auto';
  if (shared === false) return startDedicated();
  if (typeof SharedWorker === 'undefined') {
    if (shared === true) throw new Error('this browser has no SharedWorker: use createEngine({ shared: false })');
    return startDedicated();
  }
  try {
    return await joinShared(options.heartbeat);
  } catch (err) {
    if (shared === true) throw err;
    console.info(`cohort: using a dedicated engine worker for this page (${(err as Error).message})`);
    return startDedicated();
  }
}
