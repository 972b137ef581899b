// The library's one comlink file: wraps an endpoint serving EngineApi (the engine worker, or a Node
// worker thread in tests) as an EngineLink, proxying callbacks. No engine logic, no DOM.
import * as Comlink from 'comlink';
import type { EngineApi } from '../protocol/api';
import type { EngineLink } from './completions';

export interface RemoteLink {
  link: EngineLink;
  /** Drops the comlink proxy; the endpoint (worker) is the caller's to end. */
  release(): void;
}

export function linkOverEndpoint(endpoint: Comlink.Endpoint): RemoteLink {
  const remote = Comlink.wrap<EngineApi>(endpoint);
  const link: EngineLink = {
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
  return { link, release: () => remote[Comlink.releaseProxy]() };
}
