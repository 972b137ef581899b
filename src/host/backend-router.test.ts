// BackendRouter's forwarding: verbs it does not route reach whichever backend serves now (a scripted
// local host, then a server answering over a stubbed fetch), a subclass's own verbs come first.
import { describe, expect, it } from 'vitest';
import { Subscriptions } from '../engine/listeners';
import type { EngineNotice, HostApi, ModelInfo, SessionId } from '../protocol/api';
import type { SessionSnapshot, StepEvent, TurnResult } from '../protocol/events';
import { BackendRouter } from './backend-router';
import type { EngineHost } from './engine-host';

const LOCAL_MODEL = { name: 'local-model' } as ModelInfo;

/** A local host that answers every verb from a script and records what it was asked. */
class ScriptedLocal extends Subscriptions<StepEvent, EngineNotice> implements HostApi {
  readonly calls: string[] = [];
  private model: ModelInfo | null = null;

  private note(call: string): void {
    this.calls.push(call);
  }
  emitStep(event: StepEvent): void {
    this.steps.emit(event);
  }
  async loadModel(): Promise<ModelInfo> {
    this.note('loadModel');
    this.model = LOCAL_MODEL;
    return LOCAL_MODEL;
  }
  async createSession(): Promise<SessionId> {
    this.note('createSession');
    return 'local-1';
  }
  async send(sessionId: SessionId, input: string | Int32Array): Promise<void> {
    this.note(`send ${sessionId} ${String(input)}`);
  }
  async cancel(sessionId: SessionId): Promise<void> {
    this.note(`cancel ${sessionId}`);
  }
  async closeSession(sessionId: SessionId): Promise<void> {
    this.note(`closeSession ${sessionId}`);
  }
  async resetSession(sessionId: SessionId): Promise<void> {
    this.note(`resetSession ${sessionId}`);
  }
  async waitForTurn(sessionId: SessionId): Promise<TurnResult> {
    this.note(`waitForTurn ${sessionId}`);
    return { sessionId, requestId: 'q', promptTokenIds: [], outputTokenIds: [], text: '', finishReason: 'eos' };
  }
  async getSession(sessionId: SessionId): Promise<SessionSnapshot> {
    this.note(`getSession ${sessionId}`);
    return { sessionId } as SessionSnapshot;
  }
  async currentModel(): Promise<ModelInfo | null> {
    return this.model;
  }
  async unloadModel(): Promise<void> {
    this.note('unloadModel');
    this.model = null;
  }
  async setMode(): Promise<void> {}
  async setStepBudget(): Promise<void> {}
  async ping(): Promise<true> {
    this.note('ping');
    return true;
  }
  /** Not a HostApi verb: a subclass of the router that serves it must answer it itself. */
  async debugCloseWorker(): Promise<void> {
    this.note('debugCloseWorker');
  }
}

/** An OpenAI-compatible server with one model and nothing else (no /props, /slots or /metrics). */
const serverFetch: typeof fetch = async (input) => {
  const url = String(input);
  if (url.endsWith('/v1/models')) return Response.json({ data: [{ id: 'served-model', owned_by: 'someone' }] });
  return new Response('not found', { status: 404 });
};

function routerOver(local: ScriptedLocal): BackendRouter {
  return new BackendRouter(local as unknown as EngineHost, { fetchFn: serverFetch });
}

describe('BackendRouter', () => {
  it('forwards the verbs it does not route to the local host, bound to it, and keeps its own subscriptions', async () => {
    const local = new ScriptedLocal();
    const router = routerOver(local);
    const steps: StepEvent[] = [];
    await router.subscribe((event) => steps.push(event));
    await router.loadModel({ kind: 'embedded' });
    expect(await router.createSession()).toBe('local-1');
    await router.send('local-1', 'hi');
    await router.cancel('local-1');
    await router.resetSession('local-1');
    expect((await router.waitForTurn('local-1')).sessionId).toBe('local-1');
    expect((await router.getSession('local-1')).sessionId).toBe('local-1');
    await router.closeSession('local-1');
    expect(await router.ping()).toBe(true);
    expect(await router.currentModel()).toBe(LOCAL_MODEL);
    expect(local.calls).toEqual([
      'loadModel',
      'createSession',
      'send local-1 hi',
      'cancel local-1',
      'resetSession local-1',
      'waitForTurn local-1',
      'getSession local-1',
      'closeSession local-1',
      'ping',
    ]);
    local.emitStep({ stepIndex: 7 } as StepEvent);
    expect(steps.map((s) => s.stepIndex)).toEqual([7]);
  });

  it('sends the same verbs to a server once one loads, and back to the local host after a local load', async () => {
    const local = new ScriptedLocal();
    const router = routerOver(local);
    await router.loadModel({ kind: 'embedded' });
    const info = await router.loadModel({ kind: 'server', baseUrl: 'http://server.test:8080' });
    expect(info.name).toBe('served-model');
    expect(local.calls).toEqual(['loadModel', 'unloadModel']);
    expect((await router.currentModel())?.name).toBe('served-model');
    const sessionId = await router.createSession();
    expect(sessionId).not.toBe('local-1');
    expect((await router.getSession(sessionId)).state).toBe('idle');
    await router.closeSession(sessionId);
    expect(local.calls).toEqual(['loadModel', 'unloadModel']);

    await router.loadModel({ kind: 'embedded' });
    expect(await router.currentModel()).toBe(LOCAL_MODEL);
    expect(await router.createSession()).toBe('local-1');
  });

  it("answers a subclass's own verbs before any backend's, and is not mistaken for a promise", async () => {
    const scopeCalls: string[] = [];
    class ScopedRouter extends BackendRouter {
      async debugCloseWorker(): Promise<void> {
        scopeCalls.push('debugCloseWorker');
      }
    }
    const local = new ScriptedLocal();
    const router = new ScopedRouter(local as unknown as EngineHost);
    await router.debugCloseWorker();
    expect(scopeCalls).toEqual(['debugCloseWorker']);
    expect(local.calls).toEqual([]);
    expect(router.local).toBe(local);
    // an async function returning the router (as comlink's expose and any caller may) resolves to it
    expect(await (async () => router)()).toBe(router);
  });
});
