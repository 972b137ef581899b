// One tab's view of the shared engine: EngineApi forwarded to the one engine, remembering the
// sessions and subscriptions this tab made so they end when it leaves or goes silent. No comlink.
import type { EngineApi, EngineNotice, KvCacheOptions, LoadProgress, ModelInfo, ModelSource, SessionId, SessionOptions, TabApi } from '../src/protocol/api';
import type { StepEvent } from '../src/protocol/events';
import { TAB_EXPIRED_ERROR_NAME } from '../src/protocol/tab-errors';

/** A tab that never said hello (or whose probe failed) is dropped after this much silence. */
export const DEFAULT_TAB_TIMEOUT_MS = 90_000;

export type EndReason = 'goodbye' | 'silent';

/** Loads shared by every tab: a second tab asking for the model already loaded (or loading) joins it. */
export class SharedLoads {
  private current: { key: string | null; info: Promise<ModelInfo> } | null = null;

  constructor(private readonly engine: EngineApi) {}

  load(source: ModelSource, onProgress?: (p: LoadProgress) => void, kv?: KvCacheOptions): Promise<ModelInfo> {
    // Picked files cannot be compared; any other source is data, compared as JSON (with the KV
    // options: a tab asking for another KV type or size gets its own load, not the one serving).
    const key = source.kind === 'files' ? null : JSON.stringify([source, kv?.kvCacheType ?? null, kv?.kvCacheBytes ?? null]);
    if (key !== null && this.current?.key === key) return this.current.info;
    const info = this.engine.loadModel(source, onProgress, kv);
    const previous = this.current;
    const current = { key, info };
    this.current = current;
    // A failed load changes nothing: the model serving before still serves, and a tab asking for it
    // joins it (a reload would replace it, ending every tab's turns as model_changed).
    info.catch(() => {
      if (this.current === current) this.current = previous;
    });
    return info;
  }

  async unload(): Promise<void> {
    this.current = null;
    await this.engine.unloadModel();
  }
}

export class TabConnection {
  readonly api: TabApi;
  private readonly sessionIds = new Set<SessionId>();
  private readonly subscriptionIds = new Set<number>();
  private lastSeenMs = Date.now();
  private timeoutMs = DEFAULT_TAB_TIMEOUT_MS;
  private ended: EndReason | null = null;

  constructor(
    private readonly engine: EngineApi,
    loads: SharedLoads,
    private readonly onEnd: (tab: TabConnection, reason: EndReason) => void,
  ) {
    const own: Partial<TabApi> = {
      loadModel: (source: ModelSource, onProgress?: (p: LoadProgress) => void, kv?: KvCacheOptions) => loads.load(source, onProgress, kv),
      unloadModel: () => loads.unload(),
      createSession: async (options?: SessionOptions) => {
        const id = await engine.createSession(options);
        this.sessionIds.add(id);
        return id;
      },
      closeSession: async (id: SessionId) => {
        this.sessionIds.delete(id);
        await engine.closeSession(id);
      },
      subscribe: async (onStep: (event: StepEvent) => void) => this.track(await engine.subscribe(onStep)),
      subscribeNotices: async (onNotice: (notice: EngineNotice) => void) => this.track(await engine.subscribeNotices(onNotice)),
      unsubscribe: async (id: number) => {
        this.subscriptionIds.delete(id);
        await engine.unsubscribe(id);
      },
      hello: async (timeoutMs: number) => {
        this.timeoutMs = timeoutMs;
      },
      goodbye: async () => this.end('goodbye'),
    };
    // A proxy rather than ~20 forwarding methods: every call counts as a heartbeat, and the calls
    // that need no bookkeeping reach the engine as they are.
    this.api = new Proxy(engine as TabApi, {
      get: (target, key) => {
        this.lastSeenMs = Date.now();
        if (this.ended && key !== 'then') return () => Promise.reject(this.endedError());
        if (typeof key === 'string' && key in own) return own[key as keyof TabApi];
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  get numSessions(): number {
    return this.sessionIds.size;
  }

  /** Ends the tab when it has been silent longer than its timeout; true if it did. */
  checkHeartbeat(nowMs: number): boolean {
    if (this.ended || nowMs - this.lastSeenMs <= this.timeoutMs) return false;
    this.end('silent');
    return true;
  }

  /** Closes this tab's sessions (cancelling their turns, freeing their blocks) and drops its subscriptions. */
  end(reason: EndReason): void {
    if (this.ended) return;
    this.ended = reason;
    for (const id of this.sessionIds) void this.engine.closeSession(id).catch(() => undefined); // already closed or model gone
    for (const id of this.subscriptionIds) void this.engine.unsubscribe(id);
    this.sessionIds.clear();
    this.subscriptionIds.clear();
    this.onEnd(this, reason);
  }

  /**
   * What every call of an ended tab rejects with. A silent tab was only frozen or throttled, maybe: it
   * learns on its next call (its heartbeat's) that its turns were cancelled, by a name the library types.
   */
  private endedError(): Error {
    if (this.ended === 'silent') {
      const error = new Error(`this tab's engine connection ended (silent): the engine dropped this tab after its heartbeat expired (no call for more than ${this.timeoutMs} ms) and cancelled its requests`);
      error.name = TAB_EXPIRED_ERROR_NAME;
      return error;
    }
    return new Error(`this tab's engine connection ended (${this.ended}): create a new engine`);
  }

  private track(subscriptionId: number): number {
    this.subscriptionIds.add(subscriptionId);
    return subscriptionId;
  }
}
