// CohortEngine: what createEngine() returns — load/unload, the loaded model, the step stream and
// chat.completions — over any EngineLink (the worker in a page, an in-process host in tests).
import type { LoadProgress, ModelSource, SessionId } from '../protocol/api';
import type { StepEvent } from '../protocol/events';
import type { StepBudget } from '../protocol/api';
import { Listeners } from '../engine/listeners';
import { Channel } from './channel';
import { fromEngineError, runCompletion, type EngineLink, type RunContext } from './completions';
import { checkKvOptions, checkSource, fromLoadError, ModelNotLoadedError, type CohortError } from './errors';
import type { KvCacheOptions } from '../protocol/kv-options';
import { planRequest } from './request';
import type {
  ChatCompletion,
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionStream,
  LoadedModel,
  RequestOptions,
} from './types';

/** How to load: progress reports, and the KV pool's storage type (default 'f16') and size in bytes (default: from the device). */
export interface LoadOptions extends KvCacheOptions {
  onProgress?: (progress: LoadProgress) => void;
}

/** Whether a step concerns any of the sessions: a row, a finish or a wait of one of them. */
function involves(event: StepEvent, ids: ReadonlySet<SessionId>): boolean {
  return event.rows.some((r) => ids.has(r.sessionId)) || event.finished.some((f) => ids.has(f.sessionId)) || event.waiting.some((w) => ids.has(w.sessionId));
}

export class CohortEngine {
  readonly chat: {
    completions: {
      create(request: ChatCompletionCreateParamsStreaming, options?: RequestOptions): Promise<ChatCompletionStream>;
      create(request: ChatCompletionCreateParamsNonStreaming, options?: RequestOptions): Promise<ChatCompletion>;
      create(request: ChatCompletionCreateParams, options?: RequestOptions): Promise<ChatCompletionStream | ChatCompletion>;
    };
  };
  private model: LoadedModel | null = null;
  /** Requests' watchers (only the steps of their sessions), then onStep listeners: a faulty one never stops the others. */
  private readonly watchers = new Listeners<StepEvent>('step');
  private readonly stepListeners = new Listeners<StepEvent>('step');
  /** How to end each request in flight, by its watcher's id. */
  private readonly enders = new Map<number, (error: CohortError) => void>();
  private nextListenerId = 1;
  private gpuLossCount = 0;
  private subscribed: Promise<void> | null = null;
  private subscriptionIds: number[] = [];

  constructor(private readonly api: EngineLink) {
    const create = (request: ChatCompletionCreateParams, options: RequestOptions = {}) => this.create(request, options);
    this.chat = { completions: { create: create as CohortEngine['chat']['completions']['create'] } };
  }

  /** The loaded model (at most one), as of the last load, unload or request. */
  get models(): LoadedModel[] {
    return this.model ? [this.model] : [];
  }

  /**
   * Loads a model; the one serving now keeps serving until the new one is ready, then requests still
   * running on it fail with ModelChangedError. Rejects with an InvalidRequestError for a source of the
   * wrong shape or a bad `kvCacheType` / `kvCacheBytes` (before asking the worker, and again by the
   * worker against the model: `param` names the option) and a ModelLoadError (its `code` says why) for a failed load.
   */
  async load(source: ModelSource, options: LoadOptions = {}): Promise<LoadedModel> {
    checkSource(source);
    checkKvOptions(options);
    await this.subscribe();
    const kv: KvCacheOptions = {
      ...(options.kvCacheType !== undefined ? { kvCacheType: options.kvCacheType } : {}),
      ...(options.kvCacheBytes !== undefined ? { kvCacheBytes: options.kvCacheBytes } : {}),
    };
    const info = await this.api.loadModel(source, options.onProgress, kv).catch((err: unknown) => Promise.reject(fromLoadError(err, source)));
    this.model = { ...info, id: info.name };
    return this.model;
  }

  /** Cancels every request (they fail with ModelNotLoadedError) and frees the model and its KV pool. */
  async unload(): Promise<void> {
    await this.api.unloadModel();
    this.model = null;
  }

  /**
   * How long a step may take, which sizes prefill chunks beside decoding rows: a multiple of the
   * decode-only step and/or `maxStepMs` (default `{ multiple: 1.5 }`), or null for the token budget
   * alone (throughput over latency, as a batch job wants). One engine serves every tab that shares it,
   * so this is theirs too; a server backend checks the budget and ignores it (the server sizes its
   * own steps). Rejects with an InvalidRequestError naming the option for a bad budget.
   */
  async setStepBudget(budget: StepBudget | null): Promise<void> {
    await this.api.setStepBudget(budget).catch((err: unknown) => Promise.reject(fromEngineError(err)));
  }

  /** Calls `onStep` once per engine step (every session's rows, not only this page's); returns unsubscribe. */
  onStep(onStep: (event: StepEvent) => void): () => void {
    const id = this.stepListeners.add(this.nextListenerId++, onStep);
    this.subscribe().catch((err: unknown) => console.error('step subscription failed', err));
    return () => this.stepListeners.delete(id);
  }

  /** The step stream as an async iterable; ends when the loop breaks or `signal` aborts. */
  steps(options: { signal?: AbortSignal } = {}): AsyncIterable<StepEvent> {
    let off = () => {};
    const channel = new Channel<StepEvent>(() => off());
    off = this.onStep((event) => channel.push(event));
    options.signal?.addEventListener('abort', () => (off(), channel.close()), { once: true });
    return channel;
  }

  /** Stops listening to the engine (the worker and its sessions are the owner's). */
  async dispose(): Promise<void> {
    const ids = this.subscriptionIds;
    this.subscriptionIds = [];
    this.subscribed = null;
    await Promise.all(ids.map((id) => this.api.unsubscribe(id)));
  }

  private async create(request: ChatCompletionCreateParams, options: RequestOptions): Promise<ChatCompletionStream | ChatCompletion> {
    const model = await this.currentModel();
    const plan = planRequest(request);
    await this.subscribe();
    const ctx: RunContext = {
      api: this.api,
      model,
      watch: (sessionIds, onStep, onEnded) => {
        const id = this.watchers.add(this.nextListenerId++, (event) => {
          if (involves(event, sessionIds)) onStep(event);
        });
        this.enders.set(id, onEnded);
        return () => {
          this.watchers.delete(id);
          this.enders.delete(id);
        };
      },
      gpuLosses: () => this.gpuLossCount,
    };
    return runCompletion(ctx, plan, options.signal);
  }

  /** The serving model; asks the engine when none is known here (another page may have loaded it). */
  private async currentModel(): Promise<LoadedModel> {
    const info = await this.api.currentModel().catch((err: unknown) => Promise.reject(fromEngineError(err)));
    this.model = info ? { ...info, id: info.name } : null;
    if (!this.model) throw new ModelNotLoadedError();
    return this.model;
  }

  /** Ends every request in flight with `error`: the engine, or this page's way to it, is gone. */
  protected endRequests(error: CohortError): void {
    for (const end of [...this.enders.values()]) end(error);
  }

  /**
   * The worker dropped this page's subscriptions (a shared worker ending a silent tab): forgets them
   * now, and returns how to subscribe again, where anything had, once a new link serves.
   */
  protected forgetSubscriptions(): () => Promise<void> {
    const had = this.subscribed !== null;
    this.subscribed = null;
    this.subscriptionIds = [];
    return async () => {
      if (had) await this.subscribe();
    };
  }

  /** One step subscription and one notice subscription for every request and listener here. */
  private subscribe(): Promise<void> {
    if (this.subscribed) return this.subscribed;
    const subscribed = (async () => {
      const steps = await this.api.subscribe((event) => this.dispatch(event));
      const notices = await this.api.subscribeNotices((notice) => {
        if (notice.kind === 'gpu-lost') this.gpuLossCount++;
      });
      this.subscriptionIds.push(steps, notices);
    })();
    // a failed subscription is tried again by the next caller, not kept as the answer for good
    subscribed.catch(() => {
      if (this.subscribed === subscribed) this.subscribed = null;
    });
    this.subscribed = subscribed;
    return subscribed;
  }

  private dispatch(event: StepEvent): void {
    this.watchers.emit(event);
    this.stepListeners.emit(event);
  }
}
