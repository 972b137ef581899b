// How a BrowserEngine's requests end when the shared worker drops its tab or the page terminates it,
// over fake Worker / SharedWorker globals serving a scripted engine with comlink over MessageChannels.
import * as Comlink from 'comlink';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StepEvent } from '../protocol/events';
import { TAB_EXPIRED_ERROR_NAME } from '../protocol/tab-errors';
import { row, step } from '../protocol/testing/step-fixtures';
import { AbortError, EngineTerminatedError, TabExpiredError } from './errors';
import { createEngine, type BrowserEngine } from './index';

interface Connection {
  served: object;
  state: { dropped: boolean; goodbyes: number; sessions: Set<string> };
  drop(): void;
}

/**
 * One worker's engine: every session sent a turn gets a token every 10 ms until it is closed. A
 * connection (a tab's port) can be dropped as the shared worker drops a silent tab: its sessions are
 * cancelled, its subscriptions removed, and each later call rejects with the expired error's name.
 */
class ScriptedWorker {
  readonly connections: Connection[] = [];
  readonly closed = new Set<string>();
  private readonly subscribers = new Map<number, { connection: number; onStep: (event: StepEvent) => void }>();
  private readonly turns = new Map<string, ReturnType<typeof setInterval>>();
  private nextId = 1;
  private stepIndex = 0;

  connect(): Connection {
    const connection = this.connections.length;
    const state = { dropped: false, goodbyes: 0, sessions: new Set<string>() };
    const calls = {
      ping: async () => true as const,
      gpuInfo: async () => ({ status: 'ok' as const, adapter: {}, features: [], deviceFeatures: [], limits: {} }),
      hello: async () => undefined,
      goodbye: async () => void state.goodbyes++,
      currentModel: async () => ({ name: 'scripted', contextTokens: 1024 }),
      subscribe: async (onStep: (event: StepEvent) => void) => {
        const id = this.nextId++;
        this.subscribers.set(id, { connection, onStep });
        return id;
      },
      subscribeNotices: async () => this.nextId++,
      unsubscribe: async (id: number) => void this.subscribers.delete(id),
      createSession: async () => {
        const id = `s${this.nextId++}`;
        state.sessions.add(id);
        return id;
      },
      send: async (id: string) => {
        this.turns.set(
          id,
          setInterval(() => this.emit(step(this.stepIndex++, Date.now(), 1, [row(id, 'decode', 1, [5], 'a')])), 10),
        );
      },
      closeSession: async (id: string) => {
        clearInterval(this.turns.get(id));
        this.turns.delete(id);
        this.closed.add(id);
      },
      getSession: async () => ({ stats: { tokensIn: 3, tokensOut: 1, cachedTokens: 0, totalTokensIn: 3, totalTokensOut: 1 } }),
    };
    const served = new Proxy(calls, {
      get: (target, key) => {
        if (!state.dropped || key === 'then') return Reflect.get(target, key);
        return async () => {
          throw Object.assign(new Error("this tab's engine connection ended (silent): the engine dropped this tab after its heartbeat expired"), { name: TAB_EXPIRED_ERROR_NAME });
        };
      },
    });
    const drop = () => {
      state.dropped = true;
      for (const id of state.sessions) void calls.closeSession(id);
      for (const [id, s] of this.subscribers) if (s.connection === connection) this.subscribers.delete(id);
    };
    const handle = { served, state, drop };
    this.connections.push(handle);
    return handle;
  }

  stop(): void {
    for (const timer of this.turns.values()) clearInterval(timer);
  }

  private emit(event: StepEvent): void {
    for (const { onStep } of this.subscribers.values()) onStep(event);
  }
}

let worker: ScriptedWorker;
const ports: MessagePort[] = [];

function servedPort(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  Comlink.expose(worker.connect().served, port2);
  ports.push(port1, port2);
  return port1;
}

class FakeWorker extends EventTarget {
  private readonly port = servedPort();

  constructor() {
    super();
    this.port.addEventListener('message', (e) => this.dispatchEvent(new MessageEvent('message', { data: (e as MessageEvent).data })));
    this.port.start();
  }

  postMessage(data: unknown, transfer: Transferable[] = []): void {
    this.port.postMessage(data, transfer);
  }

  terminate(): void {
    this.port.close();
  }
}

class FakeSharedWorker extends EventTarget {
  readonly port = servedPort();
}

beforeEach(() => {
  worker = new ScriptedWorker();
  vi.stubGlobal('Worker', FakeWorker);
  vi.stubGlobal('SharedWorker', FakeSharedWorker);
  vi.stubGlobal('addEventListener', () => undefined);
  vi.stubGlobal('removeEventListener', () => undefined);
});

afterEach(() => {
  vi.unstubAllGlobals();
  worker.stop();
  for (const port of ports.splice(0)) port.close();
});

/** Starts a stream and reads it in the background; `ended` settles with how it ended. */
async function startStream(engine: BrowserEngine, signal?: AbortSignal) {
  const stream = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 400, stream: true }, { signal });
  let chunks = 0;
  const ended = (async () => {
    for await (const _chunk of stream) chunks++;
  })().then(
    () => 'finished' as const,
    (err: unknown) => err,
  );
  return { ended, chunks: () => chunks };
}

/** `promise`'s outcome, or 'pending' if it has none within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);
}

describe('a tab the shared worker dropped for silence', () => {
  it('ends its streams with TabExpiredError once it wakes, and joins the worker again for the next request', async () => {
    const engine = await createEngine({ shared: true, heartbeat: { intervalMs: 20, timeoutMs: 3_000 } });
    const { ended, chunks } = await startStream(engine);
    await vi.waitFor(() => expect(chunks()).toBeGreaterThan(1));
    // what TabConnection.end('silent') does to a frozen tab: turns cancelled, steps no longer sent
    worker.connections[0]!.drop();
    const err = await within(ended, 1_000);
    expect(err).toBeInstanceOf(TabExpiredError);
    expect(err).toMatchObject({ status: 408, code: 'tab_expired', retryable: true, error: { type: 'server_error', code: 'tab_expired' } });
    expect((err as Error).message).toMatch(/heartbeat expired/);
    // the next request runs on a new port of the same worker, its steps subscribed there
    await vi.waitFor(() => expect(worker.connections).toHaveLength(2));
    const next = await within(startStream(engine), 1_000);
    expect(next).not.toBe('pending');
    if (next === 'pending') return;
    await vi.waitFor(() => expect(next.chunks()).toBeGreaterThan(1));
    engine.terminate();
    expect(await within(next.ended, 1_000)).toBeInstanceOf(EngineTerminatedError);
    await vi.waitFor(() => expect(worker.connections[1]!.state.goodbyes).toBe(1));
    expect(worker.connections[0]!.state.goodbyes).toBe(0);
  });
});

describe('BrowserEngine.terminate()', () => {
  for (const shared of [false, true]) {
    it(`ends every request in flight at once with EngineTerminatedError; later aborts and calls are quiet (${shared ? 'shared' : 'dedicated'})`, async () => {
      const engine = await createEngine({ shared, heartbeat: { intervalMs: 20 } });
      const controller = new AbortController();
      const { ended, chunks } = await startStream(engine, controller.signal);
      await vi.waitFor(() => expect(chunks()).toBeGreaterThan(0));
      // one still asking the worker for the model when the page terminates
      const asking = engine.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }], stream: true }).catch((e: unknown) => e);
      engine.terminate();
      const err = await within(ended, 1_000);
      expect(err).toBeInstanceOf(EngineTerminatedError);
      expect(err).toBeInstanceOf(AbortError);
      expect(err).toMatchObject({ code: 'engine_terminated', error: { code: 'engine_terminated' } });
      expect(await within(asking, 1_000)).toBeInstanceOf(EngineTerminatedError);
      // aborting after terminate is a no-op, not a call through the released proxy
      expect(() => controller.abort()).not.toThrow();
      await expect(engine.chat.completions.create({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(EngineTerminatedError);
      expect(() => engine.terminate()).not.toThrow();
      // the request's session was closed before the link went
      await vi.waitFor(() => expect(worker.closed.size).toBeGreaterThan(0));
    });
  }
});
