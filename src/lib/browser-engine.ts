// How a page reaches the engine: its own dedicated worker, or the one shared worker every tab of the
// origin talks to (with a heartbeat: a shared worker never hears that a tab closed). No request logic.
import { fromEngineError, type EngineLink } from './completions';
import { CohortEngine } from './engine';
import { EngineStartError, EngineTerminatedError } from './errors';
import { LinkGuard } from './link-guard';
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
  /** A new worker must answer its first call within this (its script fetched and run); default 15 s. */
  startTimeoutMs?: number;
}

/**
 * Hidden tabs' timers may fire only once a minute (Chrome's intensive throttling), so the default
 * timeout outlasts that; a tab that closes normally says goodbye at once (pagehide).
 */
const DEFAULT_HEARTBEAT = { intervalMs: 5_000, timeoutMs: 90_000 };
/** Starting the shared worker and its WebGPU device; past this, 'auto' uses a dedicated worker. */
const SHARED_PROBE_TIMEOUT_MS = 30_000;
/** A worker whose script failed fires 'error' at once; this only bounds a script that never answers. */
const DEFAULT_START_TIMEOUT_MS = 15_000;

/** A CohortEngine over a worker this page started or joined. */
export class BrowserEngine extends CohortEngine {
  constructor(
    /** Which worker serves this page: 'shared' means other tabs' requests ride in the same steps. */
    readonly workerKind: WorkerKind,
    private readonly guard: LinkGuard,
    /** Ends this page's use of the worker and drops the comlink proxy (after any last call). */
    private readonly end: () => void,
    /** Shared only: joins the worker again on a new port, after it dropped this tab for silence. */
    rejoin?: () => Promise<EngineLink>,
  ) {
    super(guard.link);
    if (rejoin) guard.onExpired = (err) => this.expired(err, rejoin);
  }

  /**
   * Dedicated: ends the worker (the GPU device and model are freed). Shared: this tab leaves (its
   * requests are cancelled); the worker and model stay for the other tabs. Either way every request
   * in flight ends at once with EngineTerminatedError (an AbortError), and later calls reject with it.
   */
  terminate(): void {
    if (this.guard.closed) return;
    const error = new EngineTerminatedError();
    // the requests' sessions are closed and the subscriptions dropped while the link still serves
    this.endRequests(error);
    void this.dispose().catch(() => undefined);
    this.guard.close(error);
    this.end();
  }

  /**
   * The shared worker ended this tab while it was frozen or throttled past its heartbeat timeout: its
   * turns were cancelled and its subscriptions dropped, so no step will end its requests. They end
   * now with TabExpiredError; the engine joins the worker again on a new port for the next ones.
   */
  private expired(err: Error, rejoin: () => Promise<EngineLink>): Promise<EngineLink> {
    this.endRequests(fromEngineError(err));
    const subscribeAgain = this.forgetSubscriptions();
    const next = rejoin();
    // runs before the guard switches to the new link, so its calls wait for it and go there
    next.then(subscribeAgain).catch(() => undefined);
    return next;
  }
}

type WorkerConstructorOptions = ConstructorParameters<typeof globalThis.Worker>[1];

/**
 * Why a worker script did not start, as far as a page can tell: the browser's 'error' event says
 * nothing for a script that failed to load, so its URL is fetched again and its answer described.
 */
export async function diagnoseWorkerScript(url: string, event?: Event): Promise<string> {
  const message = (event as ErrorEvent | undefined)?.message;
  if (message) return message;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    if (!response.ok) return `HTTP ${response.status} ${response.statusText}`.trim();
    const type = response.headers.get('content-type') ?? 'no content type';
    if (!/javascript|ecmascript/i.test(type)) return `served as ${type}: a module worker needs a JavaScript MIME type (text/javascript)`;
    return 'the script failed to load or run (the console says why)';
  } catch (err) {
    return `it could not be fetched (${(err as Error).message})`;
  }
}

/**
 * Resolves once `handshake` answers; rejects with an EngineStartError naming `url` and the cause as
 * soon as the worker fires 'error', or when it is silent past `timeoutMs`.
 */
export async function workerStarted<T>(target: EventTarget, url: string, handshake: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onError: (event: Event) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    onError = (event) => void diagnoseWorkerScript(url, event).then((reason) => reject(new EngineStartError(url, reason)));
    target.addEventListener('error', onError, { once: true });
    timer = setTimeout(() => reject(new EngineStartError(url, `it did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([handshake, failed]);
  } finally {
    clearTimeout(timer);
    target.removeEventListener('error', onError);
  }
}

async function startDedicated(timeoutMs: number): Promise<BrowserEngine> {
  // Vite bundles the worker only where it reads `new Worker(new URL('…', import.meta.url))`: this
  // local Worker keeps that form and remembers the URL it was given, so a failed start can name it.
  let url = '';
  const Worker = class extends globalThis.Worker {
    constructor(scriptUrl: URL, options: WorkerConstructorOptions) {
      super(scriptUrl, options);
      url = scriptUrl.href;
    }
  };
  const worker = new Worker(new URL('../../workers/engine.worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
  const remote = linkOverEndpoint(worker);
  const end = () => {
    remote.release();
    worker.terminate();
  };
  try {
    await workerStarted(worker, url, remote.link.ping(), timeoutMs);
  } catch (err) {
    end();
    throw err;
  }
  return new BrowserEngine('dedicated', new LinkGuard(remote.link), end);
}

/** One port to the shared worker, its handshake done: WebGPU works there, and the tab said hello. */
interface TabPort {
  remote: ReturnType<typeof linkOverTabPort>;
  port: MessagePort;
}

/** Joins (or starts) the origin's shared engine worker; rejects where WebGPU does not work in it. */
async function joinShared(heartbeat: WorkerOptions['heartbeat'], timeoutMs: number): Promise<BrowserEngine> {
  const { intervalMs, timeoutMs: silentMs } = { ...DEFAULT_HEARTBEAT, ...heartbeat };
  const connect = async (): Promise<TabPort> => {
    let url = '';
    const SharedWorker = class extends globalThis.SharedWorker {
      constructor(scriptUrl: URL, options: WorkerConstructorOptions) {
        super(scriptUrl, options);
        url = scriptUrl.href;
      }
    };
    const worker = new SharedWorker(new URL('../../workers/engine.shared-worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' });
    const remote = linkOverTabPort(worker.port);
    try {
      // the first call is the handshake; its WebGPU device may take longer to come than the script
      const gpu = await workerStarted(worker, url, remote.tab.gpuInfo(), Math.max(timeoutMs, SHARED_PROBE_TIMEOUT_MS));
      if (gpu.status !== 'ok') throw new Error(`no WebGPU in the shared worker: ${gpu.message}`);
      await remote.tab.hello(silentMs);
    } catch (err) {
      remote.release();
      worker.port.close();
      throw err;
    }
    return { remote, port: worker.port };
  };
  let current = await connect();
  const guard = new LinkGuard(current.remote.link);
  // a ping the worker refuses because it dropped this tab is how a thawed tab learns it (the guard tells)
  const ping = () => void guard.link.ping().catch(() => undefined);
  const beat = setInterval(ping, intervalMs);
  // A frozen page's timers resume late: it asks at once when it wakes (Page Lifecycle 'resume').
  globalThis.document?.addEventListener('resume', ping);
  // A page put in the back-forward cache may come back: the heartbeat timeout decides for it.
  const onPageHide = (event: PageTransitionEvent) => void (event.persisted || current.remote.tab.goodbye().catch(() => undefined));
  addEventListener('pagehide', onPageHide);
  const rejoin = async (): Promise<EngineLink> => {
    const next = await connect();
    current.remote.release();
    current.port.close();
    current = next;
    if (guard.closed) {
      // terminated while it joined: leave the new port as leave() would have
      leaveCurrent();
      throw new Error('the engine was terminated');
    }
    return next.remote.link;
  };
  const leaveCurrent = () => {
    const { remote, port } = current;
    // the goodbye goes before the proxy's release, which closes the port on the worker's side
    void remote.tab.goodbye().catch(() => undefined).finally(() => {
      remote.release();
      port.close();
    });
  };
  const leave = () => {
    clearInterval(beat);
    globalThis.document?.removeEventListener('resume', ping);
    removeEventListener('pagehide', onPageHide);
    leaveCurrent();
  };
  return new BrowserEngine('shared', guard, leave, rejoin);
}

/** The engine worker createEngine() uses, per `options.shared`. */
export async function startBrowserEngine(options: WorkerOptions): Promise<BrowserEngine> {
  const shared = options.shared ?? 'auto';
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  if (shared === false) return startDedicated(timeoutMs);
  if (typeof SharedWorker === 'undefined') {
    if (shared === true) throw new Error('this browser has no SharedWorker: use createEngine({ shared: false })');
    return startDedicated(timeoutMs);
  }
  try {
    return await joinShared(options.heartbeat, timeoutMs);
  } catch (err) {
    if (shared === true) throw err;
    console.info(`cohort: using a dedicated engine worker for this page (${(err as Error).message})`);
    return startDedicated(timeoutMs);
  }
}
