// The library's one comlink file: wraps an endpoint serving EngineApi (the engine worker, a shared
// worker's port, or a Node worker thread in tests) as an EngineLink, proxying callbacks. No engine logic, no DOM.
import * as Comlink from 'comlink';
import type { EngineApi, GpuInfo } from '../protocol/api';
import type { EngineLink } from './completions';

export interface RemoteLink {
  link: EngineLink;
  /** Drops the comlink proxy; the endpoint (worker) is the caller's to end. */
  release(): void;
}

/**
 * What the shared worker (workers/engine.shared-worker.ts) serves on each tab's port besides
 * EngineApi. Declared on both sides by the same names (src/lib may not import workers/).
 */
export interface TabCalls {
  /** This tab pings at least this often; silent longer than timeoutMs, its sessions are ended. */
  hello(timeoutMs: number): Promise<void>;
  /** This tab is leaving: end its sessions and subscriptions now. */
  goodbye(): Promise<void>;
  gpuInfo(): Promise<GpuInfo>;
}

function linkOver(remote: Comlink.Remote<EngineApi>): EngineLink {
  return {
    loadModel: (source, onProgress) => remote.loadModel(source, onProgress ? Comlink.proxy(onProgress) : undefined),
    currentModel: () => remote.currentModel(),
    unloadModel: () => remote.unloadModel(),
    createSession: (options) => remote.createSession(options),
    send: (sessionId, input) => remote.send(sessionId, input),
    cancel: (sessionId) => remote.cancel(sessionId),
    closeSession: (sessionId) => remote.closeSession(sessionId),
    getSession: (sessionId) => remote.getSession(sessionId),
    subscribe: (onStep) => remote.subscribe(Comlink.proxy(onStep)),
    subscribeNotices: (onNotice) => remote.subscribeNotices(Comlink.proxy(onNotice)),
    unsubscribe: (id) => remote.unsubscribe(id),
    ping: () => remote.ping(),
  };
}

export function linkOverEndpoint(endpoint: Comlink.Endpoint): RemoteLink {
  const remote = Comlink.wrap<EngineApi>(endpoint);
  return { link: linkOver(remote), release: () => remote[Comlink.releaseProxy]() };
}

/** A link over one port of the shared worker, with its per-tab calls. */
export function linkOverTabPort(port: MessagePort): RemoteLink & { tab: TabCalls } {
  const remote = Comlink.wrap<EngineApi & TabCalls>(port);
  const tab: TabCalls = { hello: (timeoutMs) => remote.hello(timeoutMs), goodbye: () => remote.goodbye(), gpuInfo: () => remote.gpuInfo() };
  return { link: linkOver(remote), tab, release: () => remote[Comlink.releaseProxy]() };
}
