// BackendRouter: one EngineApi over two backends, the local engine (EngineHost) and a server
// (ServerHost): a 'server' source connects the second, any other loads the first. Routing only.
import { Subscriptions } from '../engine/listeners';
import type { EngineMode, SessionSnapshot, StepEvent, TurnResult } from '../protocol/events';
import type { EngineNotice, LoadProgress, ModelInfo, ModelSource, SendInput, SessionId, SessionOptions, StepBudget } from '../protocol/api';
import { ServerHost, type ServerHostOptions } from '../remote/server-host';
import type { EngineHost, HostApi } from './engine-host';

/**
 * Whichever backend last loaded serves every call; the other is idle (the local model is
 * unloaded once a server connects, to free its GPU memory). A failed load changes nothing: the
 * backend serving before keeps serving. Subscriptions are the router's and survive a switch.
 */
export class BackendRouter extends Subscriptions<StepEvent, EngineNotice> implements HostApi {
  private active: HostApi;
  private server: ServerHost | null = null;
  private mode: EngineMode = 'batched';

  constructor(
    readonly local: EngineHost,
    private readonly serverOptions: ServerHostOptions = {},
  ) {
    super();
    this.active = local;
    void this.forward(local);
  }

  async loadModel(source: ModelSource, onProgress?: (progress: LoadProgress) => void): Promise<ModelInfo> {
    if (source.kind !== 'server') {
      const info = await this.local.loadModel(source, onProgress);
      await this.switchTo(this.local);
      return info;
    }
    const server = new ServerHost(this.serverOptions);
    const info = await server.loadModel(source, onProgress);
    await server.setMode(this.mode);
    await this.forward(server);
    await this.switchTo(server);
    return info;
  }

  private async switchTo(next: HostApi): Promise<void> {
    const previous = this.active;
    this.active = next;
    if (previous === next) return;
    await previous.unloadModel();
    if (previous === this.server && next !== this.server) this.server = null;
    if (next instanceof ServerHost) this.server = next;
  }

  /** Listens to a backend once; only the active one's events reach the router's subscribers. */
  private async forward(backend: HostApi): Promise<void> {
    await backend.subscribe((event) => {
      if (backend === this.active) this.steps.emit(event);
    });
    await backend.subscribeNotices((notice) => {
      if (backend === this.active) this.notices.emit(notice);
    });
  }

  createSession(options?: SessionOptions): Promise<SessionId> {
    return this.active.createSession(options);
  }
  send(sessionId: SessionId, input: SendInput): Promise<void> {
    return this.active.send(sessionId, input);
  }
  cancel(sessionId: SessionId): Promise<void> {
    return this.active.cancel(sessionId);
  }
  closeSession(sessionId: SessionId): Promise<void> {
    return this.active.closeSession(sessionId);
  }
  resetSession(sessionId: SessionId): Promise<void> {
    return this.active.resetSession(sessionId);
  }
  waitForTurn(sessionId: SessionId): Promise<TurnResult> {
    return this.active.waitForTurn(sessionId);
  }
  getSession(sessionId: SessionId): Promise<SessionSnapshot> {
    return this.active.getSession(sessionId);
  }
  currentModel(): Promise<ModelInfo | null> {
    return this.active.currentModel();
  }
  unloadModel(): Promise<void> {
    return this.active.unloadModel();
  }
  async setMode(mode: EngineMode): Promise<void> {
    this.mode = mode;
    await Promise.all([this.local.setMode(mode), this.server?.setMode(mode)]);
  }
  setStepBudget(budget: StepBudget | null): Promise<void> {
    return this.local.setStepBudget(budget);
  }
  ping(): Promise<true> {
    return this.active.ping();
  }
}

