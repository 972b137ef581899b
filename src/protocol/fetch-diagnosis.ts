// Fetch with a first-byte timeout and failures a person can act on: offline, no answer in time,
// reachable but refusing this page (CORS), unreachable; used by the page, the loader and src/remote.

export type FetchFailureKind = 'offline' | 'timeout' | 'cors' | 'unreachable';

/** A request that got no usable answer; `kind` says why, as far as the browser lets us tell. */
export class FetchFailure extends Error {
  constructor(
    readonly kind: FetchFailureKind,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(describeFetchFailure(kind, url, timeoutMs));
    this.name = 'FetchFailure';
  }
}

/** Browsers hide why a fetch failed; these are the facts we can gather after it did. */
export interface FailureFacts {
  /** navigator.onLine; undefined where there is none (Node). */
  onLine: boolean | undefined;
  /** Our timer, not the network, ended the request. */
  timedOut: boolean;
  /** A no-cors request to the same URL got an (opaque) answer: the server is there. */
  reachableWithoutCors: boolean;
}

export function classifyFetchFailure(facts: FailureFacts): FetchFailureKind {
  if (facts.onLine === false) return 'offline';
  if (facts.timedOut) return 'timeout';
  return facts.reachableWithoutCors ? 'cors' : 'unreachable';
}

function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

export function describeFetchFailure(kind: FetchFailureKind, url: string, timeoutMs: number): string {
  const host = hostOf(url);
  switch (kind) {
    case 'offline':
      return `You are offline (the browser reports no network), so ${host} cannot be asked: connect and try again, or load a model from local files.`;
    case 'timeout':
      return `${host} did not answer within ${Math.round(timeoutMs / 1000)} s: the server or the network is slow or down; try again later (${url}).`;
    case 'cors':
      return `${host} answered but does not allow this page to read it (CORS): use a server that sends Access-Control-Allow-Origin, or download the file and load it from Files (${url}).`;
    case 'unreachable':
      return `${host} could not be reached (no DNS answer, a refused connection, a proxy or a content blocker): check the address and your network (${url}).`;
  }
}

export interface DiagnosisOptions {
  fetchFn?: typeof fetch;
  /** Time allowed until the response headers arrive; the body may then take as long as it needs. */
  timeoutMs?: number;
  /** navigator.onLine where there is a navigator. */
  isOnline?: () => boolean | undefined;
}

export const DEFAULT_FETCH_TIMEOUT_MS = 15_000;
/** The no-cors probe only has to connect; it gets less time than the request it explains. */
const PROBE_TIMEOUT_MS = 5_000;

export function browserOnline(): boolean | undefined {
  return (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine;
}

/** Whether anything answers at url when we do not ask to read the answer (mode: no-cors). */
export async function answersWithoutCors(url: string, fetchFn: typeof fetch): Promise<boolean> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), PROBE_TIMEOUT_MS);
  try {
    await fetchFn(url, { mode: 'no-cors', signal: controller.signal });
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** fetch, but a network failure or a silent server ends in a FetchFailure within timeoutMs. */
export async function fetchWithDiagnosis(input: string | URL | Request, init: RequestInit = {}, options: DiagnosisOptions = {}): Promise<Response> {
  const fetchFn = options.fetchFn ?? fetch;
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const isOnline = options.isOnline ?? browserOnline;
  if (isOnline() === false) throw new FetchFailure('offline', url, timeoutMs);
  const controller = new AbortController();
  const outer = init.signal;
  // A caller's own abort stays an abort: it is passed on, not diagnosed.
  if (outer?.aborted) throw outer.reason;
  const onOuterAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    return await fetchFn(input, { ...init, signal: controller.signal });
  } catch (error) {
    if (outer?.aborted) throw error;
    const reachableWithoutCors = timedOut ? false : await answersWithoutCors(url, fetchFn);
    throw new FetchFailure(classifyFetchFailure({ onLine: isOnline(), timedOut, reachableWithoutCors }), url, timeoutMs);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

/** A fetch function with the diagnosis built in, for code that takes a `fetchFn`. */
export function diagnosedFetch(fetchFn: typeof fetch = fetch, options: Omit<DiagnosisOptions, 'fetchFn'> = {}): typeof fetch {
  return (input, init) => fetchWithDiagnosis(input, init, { ...options, fetchFn });
}
