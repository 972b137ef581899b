// The one comlink adapter, the library's and the page's: an endpoint serving async verbs, as those verbs
// (EngineApi of the engine worker, TabApi of a shared worker's port, a Node thread in tests). No engine logic, no DOM.
import * as Comlink from 'comlink';
import type { EngineApi, TabApi, TabCalls } from '../protocol/api';
import type { EngineLink } from './completions';

/** An API of verbs only: every member a method returning a Promise, as comlink answers. */
export type Verbs<T> = { [K in keyof T]: (...args: never[]) => Promise<unknown> };

export interface Wrapped<T> {
  api: T;
  /** Drops the comlink proxy; the endpoint (worker, port) is the caller's to end. */
  release(): void;
}

/**
 * `T` over `endpoint`, with no list of its verbs: any name called is sent as that call, so a verb
 * added to EngineApi needs nothing here. Function arguments go as comlink proxies (called back
 * across the endpoint) and typed arrays are transferred, not copied: the caller must not reuse
 * them. Only top-level arguments are looked at. `own` members answer here, before the endpoint.
 */
export function wrapEndpoint<T extends Verbs<T>, Own extends object = object>(endpoint: Comlink.Endpoint, own?: Own): Wrapped<T & Own> {
  const remote = Comlink.wrap<T>(endpoint);
  const api = new Proxy(own ?? {}, {
    get(target, key) {
      if (key in target) return Reflect.get(target, key);
      // `then` must stay undefined, or awaiting the api (an async function returning it) would call the worker
      if (typeof key !== 'string' || key === 'then') return undefined;
      const call = Reflect.get(remote, key) as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => call(...args.map(toWire));
    },
  }) as T & Own;
  return { api, release: () => remote[Comlink.releaseProxy]() };
}

function toWire(arg: unknown): unknown {
  if (typeof arg === 'function') return Comlink.proxy(arg);
  if (ArrayBuffer.isView(arg) && arg.buffer instanceof ArrayBuffer) return Comlink.transfer(arg, [arg.buffer]);
  return arg;
}

export interface RemoteLink {
  link: EngineLink;
  /** Drops the comlink proxy; the endpoint (worker) is the caller's to end. */
  release(): void;
}

/** The library's link to an engine worker (a page's dedicated one, or a Node worker thread in tests). */
export function linkOverEndpoint(endpoint: Comlink.Endpoint): RemoteLink {
  const { api, release } = wrapEndpoint<EngineApi>(endpoint);
  return { link: api, release };
}

/** A link over one port of the shared worker, with its per-tab calls. */
export function linkOverTabPort(port: MessagePort): RemoteLink & { tab: TabCalls & Pick<EngineApi, 'gpuInfo'> } {
  const { api, release } = wrapEndpoint<TabApi>(port);
  return { link: api, tab: api, release };
}
