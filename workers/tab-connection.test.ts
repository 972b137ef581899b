// TabConnection and SharedLoads over a scripted engine (Node): a tab's sessions and subscriptions
// end with it (goodbye or silence), other tabs' stay; the same model source is loaded once.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { EngineApi, ModelInfo } from '../src/protocol/api';
import { TAB_EXPIRED_ERROR_NAME } from '../src/protocol/tab-errors';
import { SharedLoads, TabConnection, type EndReason } from './tab-connection';

function scriptedEngine() {
  let nextId = 1;
  const open = new Set<string>();
  const subscriptions = new Set<number>();
  const engine = {
    createSession: vi.fn(async () => {
      const id = `s${nextId++}`;
      open.add(id);
      return id;
    }),
    closeSession: vi.fn(async (id: string) => void open.delete(id)),
    subscribe: vi.fn(async () => {
      const id = nextId++;
      subscriptions.add(id);
      return id;
    }),
    subscribeNotices: vi.fn(async () => nextId++),
    unsubscribe: vi.fn(async (id: number) => void subscriptions.delete(id)),
    ping: vi.fn(async () => true as const),
    loadModel: vi.fn(async () => ({ name: 'm' }) as ModelInfo),
    unloadModel: vi.fn(async () => undefined),
  };
  return { engine, api: engine as unknown as EngineApi, open, subscriptions };
}

function tab(api: EngineApi, loads = new SharedLoads(api)) {
  const ended: EndReason[] = [];
  const connection = new TabConnection(api, loads, (_t, reason) => ended.push(reason));
  return { connection, ended };
}

describe('TabConnection', () => {
  it("ends only its own sessions and subscriptions when the tab says goodbye", async () => {
    const { api, open, subscriptions } = scriptedEngine();
    const a = tab(api);
    const b = tab(api);
    const aSession = await a.connection.api.createSession();
    const bSession = await b.connection.api.createSession();
    await a.connection.api.subscribe(() => {});
    const bSub = await b.connection.api.subscribe(() => {});
    await a.connection.api.goodbye();
    expect(a.ended).toEqual(['goodbye']);
    expect([...open]).toEqual([bSession]);
    expect([...subscriptions]).toEqual([bSub]);
    expect(open.has(aSession)).toBe(false);
    expect(b.connection.numSessions).toBe(1);
  });

  it('forgets a session the tab closed itself', async () => {
    const { api, engine } = scriptedEngine();
    const a = tab(api);
    const id = await a.connection.api.createSession();
    await a.connection.api.closeSession(id);
    expect(a.connection.numSessions).toBe(0);
    await a.connection.api.goodbye();
    expect(engine.closeSession).toHaveBeenCalledTimes(1);
  });

  it('ends a tab silent past the timeout it asked for; any call counts as a heartbeat', async () => {
    vi.useFakeTimers({ toFake: ['Date'] }); // the tab's clock is the test's: the calls below take no time on it
    onTestFinished(() => void vi.useRealTimers());
    const { api, open } = scriptedEngine();
    const a = tab(api);
    await a.connection.api.hello(1_000);
    await a.connection.api.createSession();
    const now = Date.now();
    expect(a.connection.checkHeartbeat(now + 1_000)).toBe(false);
    vi.setSystemTime(now + 900);
    await a.connection.api.ping();
    expect(a.connection.checkHeartbeat(now + 1_900)).toBe(false);
    expect(a.connection.checkHeartbeat(now + 1_901)).toBe(true);
    expect(a.ended).toEqual(['silent']);
    expect(open.size).toBe(0);
    // a tab that was only frozen learns it on its next call, by a name the library types
    const err = await a.connection.api.ping().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: TAB_EXPIRED_ERROR_NAME, message: expect.stringMatching(/connection ended \(silent\).*heartbeat expired \(no call for more than 1000 ms\)/) });
    await expect(a.connection.api.createSession()).rejects.toThrow(/connection ended \(silent\)/);
  });

  it('a tab that said goodbye gets a plain ended error, not the expired one', async () => {
    const { api } = scriptedEngine();
    const a = tab(api);
    await a.connection.api.goodbye();
    const err = await a.connection.api.ping().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'Error', message: expect.stringMatching(/connection ended \(goodbye\)/) });
  });
});

describe('SharedLoads', () => {
  it('loads a source once for every tab, again after an unload; a failed load leaves the serving one to join', async () => {
    const { api, engine } = scriptedEngine();
    const loads = new SharedLoads(api);
    const a = tab(api, loads);
    const b = tab(api, loads);
    await Promise.all([a.connection.api.loadModel({ kind: 'embedded' }), b.connection.api.loadModel({ kind: 'embedded' })]);
    expect(engine.loadModel).toHaveBeenCalledTimes(1);
    await b.connection.api.loadModel({ kind: 'url', url: 'https://example.com/m/' });
    expect(engine.loadModel).toHaveBeenCalledTimes(2);
    await a.connection.api.unloadModel();
    await a.connection.api.loadModel({ kind: 'url', url: 'https://example.com/m/' });
    expect(engine.loadModel).toHaveBeenCalledTimes(3);
    engine.loadModel.mockRejectedValueOnce(new Error('fetch failed'));
    await expect(a.connection.api.loadModel({ kind: 'embedded' })).rejects.toThrow('fetch failed');
    // the failure left the url model serving: asking for it again joins it instead of reloading it
    await b.connection.api.loadModel({ kind: 'url', url: 'https://example.com/m/' });
    expect(engine.loadModel).toHaveBeenCalledTimes(4);
    await a.connection.api.loadModel({ kind: 'embedded' });
    expect(engine.loadModel).toHaveBeenCalledTimes(5);
  });

  it('passes the KV options on, and loads again for another KV type rather than joining', async () => {
    const { api, engine } = scriptedEngine();
    const loads = new SharedLoads(api);
    const a = tab(api, loads);
    const b = tab(api, loads);
    await a.connection.api.loadModel({ kind: 'embedded' }, undefined, { kvCacheType: 'q8_0' });
    expect(engine.loadModel).toHaveBeenLastCalledWith({ kind: 'embedded' }, undefined, { kvCacheType: 'q8_0' });
    await b.connection.api.loadModel({ kind: 'embedded' }, undefined, { kvCacheType: 'q8_0' });
    expect(engine.loadModel).toHaveBeenCalledTimes(1);
    await b.connection.api.loadModel({ kind: 'embedded' });
    expect(engine.loadModel).toHaveBeenCalledTimes(2);
  });
});
