// BackendRouter: one HostApi over two backends, the local engine (EngineHost) and a server
// (ServerHost): a 'server' source connects the second, any other loads the first. Routing only.
import { Subscriptions } from '../engine/listeners';
import type { EngineMode, StepEvent } from '../protocol/events';
import type { EngineNotice, HostApi, KvCacheOptions, LoadProgress, ModelInfo, ModelSource, StepBudget } from '../protocol/api';
import { ServerHost, type ServerHostOptions } from '../remote/server-host';
import type { EngineHost } from './engine-host';

/** The verbs the router answers itself; every other HostApi verb goes to the active backend as it is. */
type RoutedVerb = 'loadModel' | 'setMode' | 'setStepBudget' | 'subscribe' | 'subscribeNotices' | 'unsubscribe';

// The constructor's Proxy supplies these at run time, so a verb added to HostApi is forwarded with no line here.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface BackendRouter extends Omit<HostApi, RoutedVerb> {}

/**
 * Whichever backend last loaded serves every call; the other is idle (the local model is
 * unloaded once a server connects, to free its GPU memory). A failed load changes nothing: the
 * backend serving before keeps serving. Subscriptions are the router's and survive a switch.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
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
    // As in workers/tab-connection.ts, a proxy rather than a forwarding method per verb: what the
    // router (or a subclass) defines answers here, any other name is the active backend's.
    return new Proxy(this, {
      get: (target, key) => {
        const owner: object = key in target ? target : target.active;
        const value: unknown = Reflect.get(owner, key);
        return typeof value === 'function' ? value.bind(owner) : value;
      },
    });
  }

  async loadModel(source: ModelSource, onProgress?: (progress: LoadProgress) => void, kv?: KvCacheOptions): Promise<ModelInfo> {
    if (source.kind !== 'server') {
      const info = await this.local.loadModel(source, onProgress, kv);
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

  async setMode(mode: EngineMode): Promise<void> {
    this.mode = mode;
    await Promise.all([this.local.setMode(mode), this.server?.setMode(mode)]);
  }

  setStepBudget(budget: StepBudget | null): Promise<void> {
    return this.local.setStepBudget(budget);
  }
}
