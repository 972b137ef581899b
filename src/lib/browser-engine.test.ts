// createEngine's start-up edges over fake Worker / SharedWorker globals (comlink over a MessageChannel):
// a script that fails to load or never answers, a malformed source, a failed load leaving no worker behind.
import * as Comlink from 'comlink';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelLoadFailure } from '../protocol/load-errors';
import { EngineStartError, InvalidRequestError, ModelLoadError } from './errors';
import { createEngine } from './index';

type Behaviour = 'serve' | 'fail-to-load' | 'silent';

/** What the fake worker serves: enough of EngineApi (and the shared worker's TabCalls) to start and load. */
const served = {
  goodbyes: 0,
  ping: async () => true as const,
  gpuInfo: async () => ({ status: 'ok' as const, adapter: {}, features: [], deviceFeatures: [], limits: {} }),
  hello: async () => undefined,
  goodbye: async () => void served.goodbyes++,
  subscribe: async () => 1,
  subscribeNotices: async () => 2,
  unsubscribe: async () => undefined,
  loadModel: async () => {
    throw new ModelLoadFailure('model_not_found', 'https://huggingface.co/nobody/nothing/resolve/main/config.json: HTTP 401 Unauthorized');
  },
};

let behaviour: Behaviour = 'serve';
const workers: FakeWorker[] = [];
const ports: MessagePort[] = [];

/** A page-side port whose other end serves `served` over comlink, or stays silent. */
function servedPort(): MessagePort {
  const { port1, port2 } = new MessageChannel();
  if (behaviour === 'serve') Comlink.expose(served, port2);
  return port1;
}

class FakeWorker extends EventTarget {
  readonly url: string;
  terminated = false;
  private readonly port = servedPort();

  constructor(url: URL) {
    super();
    this.url = url.href;
    workers.push(this);
    this.port.addEventListener('message', (e) => this.dispatchEvent(new MessageEvent('message', { data: (e as MessageEvent).data })));
    this.port.start();
    if (behaviour === 'fail-to-load') setTimeout(() => this.dispatchEvent(new Event('error')), 5);
  }

  postMessage(data: unknown, transfer: Transferable[] = []): void {
    this.port.postMessage(data, transfer);
  }

  terminate(): void {
    this.terminated = true;
    this.port.close();
  }
}

class FakeSharedWorker extends EventTarget {
  readonly port = servedPort();
  closed = false;

  constructor() {
    super();
    ports.push(this.port);
    const close = this.port.close.bind(this.port);
    this.port.close = () => ((this.closed = true), close());
    sharedWorkers.push(this);
  }
}
const sharedWorkers: FakeSharedWorker[] = [];

beforeEach(() => {
  behaviour = 'serve';
  workers.length = 0;
  sharedWorkers.length = 0;
  served.goodbyes = 0;
  vi.stubGlobal('Worker', FakeWorker);
  vi.stubGlobal('addEventListener', () => undefined);
  vi.stubGlobal('removeEventListener', () => undefined);
  // a host that serves the worker's script as text, as a misconfigured server would
  vi.stubGlobal('fetch', async () => new Response('export {}', { headers: { 'content-type': 'text/plain' } }));
});

afterEach(() => {
  vi.unstubAllGlobals();
  for (const port of ports.splice(0)) port.close();
});

describe('createEngine start-up', () => {
  it('rejects at once, naming the worker URL and the cause, when the worker script cannot load', async () => {
    behaviour = 'fail-to-load';
    vi.useFakeTimers(); // the test's own clock: "at once" is within 2 s of it, however slow the machine
    let settled = false;
    let err: unknown;
    try {
      const outcome = createEngine({ shared: false }).catch((e: unknown) => e).then((e) => ((settled = true), (err = e)));
      await vi.advanceTimersByTimeAsync(1_999);
      expect(settled).toBe(true);
      await outcome;
    } finally {
      vi.useRealTimers();
    }
    expect(err).toBeInstanceOf(EngineStartError);
    expect((err as EngineStartError).workerUrl).toMatch(/workers\/engine\.worker\.ts$/);
    expect((err as Error).message).toContain((err as EngineStartError).workerUrl);
    expect((err as Error).message).toMatch(/served as text\/plain/);
    expect(workers[0]!.terminated).toBe(true);
  });

  it('rejects when a worker never answers its first call, after startTimeoutMs', async () => {
    behaviour = 'silent';
    const err = await createEngine({ shared: false, startTimeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineStartError);
    expect((err as Error).message).toMatch(/did not answer within 50 ms/);
    expect(workers[0]!.terminated).toBe(true);
  });

  it('refuses a malformed model source with a 400 naming model.kind, before starting any worker', async () => {
    for (const model of [{ kind: 'no-such-kind' }, {}]) {
      const err = await createEngine({ shared: false, model: model as never }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'model.kind', message: expect.stringContaining("'embedded'") });
    }
    expect(workers).toHaveLength(0);
  });

  it('refuses a KV cache type it does not know with a 400 naming kvCacheType, before starting any worker', async () => {
    const err = await createEngine({ shared: false, model: { kind: 'embedded' }, kvCacheType: 'int4' as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param: 'kvCacheType' });
    expect(workers).toHaveLength(0);
  });

  it('a failed load terminates the dedicated worker it started, and rejects with a typed ModelLoadError', async () => {
    const err = await createEngine({ shared: false, model: { kind: 'huggingface', repoId: 'nobody/nothing' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelLoadError);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found', param: 'model.repoId', error: { type: 'invalid_request_error', code: 'model_not_found' } });
    expect(workers).toHaveLength(1);
    expect(workers[0]!.terminated).toBe(true);
  });

  it('a failed load leaves the shared worker: goodbye said and the port closed', async () => {
    vi.stubGlobal('SharedWorker', FakeSharedWorker);
    const err = await createEngine({ shared: true, model: { kind: 'huggingface', repoId: 'nobody/nothing' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelLoadError);
    await vi.waitFor(() => expect(sharedWorkers[0]!.closed).toBe(true));
    expect(served.goodbyes).toBe(1);
    expect(workers).toHaveLength(0);
  });
});
