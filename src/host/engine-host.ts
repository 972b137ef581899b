// EngineHost: the EngineApi over EngineCore and a runner factory (model swap, sessions, step and
// notice subscriptions, GPU-loss recovery). Pure and runner-agnostic: no DOM, GPU or comlink.
import { EngineCore } from '../engine/engine-core';
import { InvalidOptionError } from '../engine/errors';
import { Subscriptions } from '../engine/listeners';
import type { EngineMode, SessionSnapshot, StepEvent, TurnResult } from '../protocol/events';
import { DEFAULT_STEP_BUDGET, validateStepBudget, type StepBudget } from '../engine/step-budget';
import type { ModelRunner } from '../engine/types';
import type { ProgressCallback } from '../model/byte-source';
import type { ModelDesc } from '../model/desc';
import type { OpenedModel } from '../model/open-model';
import { openModelSource, type SourceOptions } from '../model/open-source';
import { lazyXGrammar } from '../model/xgrammar';
import { validateConstraint } from '../engine/constraints';
import type { EngineNotice, HostApi, LoadProgress, ModelInfo, ModelSource, SendInput, SessionId, SessionOptions } from '../protocol/api';
import { MODEL_CHANGED, ModelChangedFailure, ModelLoadFailure, toLoadFailure } from '../protocol/load-errors';
import { describeSource } from '../protocol/model-source';
import { DEFAULT_KV_CACHE_TYPE, kvOptionsModelProblem, kvOptionsShapeProblem, type KvCacheOptions, type KvOptionProblem } from '../protocol/kv-options';
import { describeModel, weightBytes } from './model-info';
import { sessionNumber } from './session-ids';

/** The KV pool a runner is asked for: the type always named (default f16), the size when the user gave one. */
export interface KvPoolRequest {
  kvCacheType: NonNullable<KvCacheOptions['kvCacheType']>;
  kvCacheBytes?: number;
}

/** A runner; one that says how its pool stores K and V (GpuRunner) is reported so, else as requested. */
export type HostRunner = ModelRunner & { readonly kvCacheType?: KvPoolRequest['kvCacheType'] };

export type RunnerFactory = (desc: ModelDesc, kv: KvPoolRequest) => Promise<HostRunner>;

export interface EngineHostOptions extends SourceOptions {
  makeRunner: RunnerFactory;
}

/** A loaded model: its engine steps on its runner (`engine.runner`, the one the host disposes; a GPU loss replaces it there). */
interface Loaded {
  opened: OpenedModel;
  /** The pool asked for at load: a rebuilt runner (GPU loss) gets the same. */
  kv: KvPoolRequest;
  engine: EngineCore;
  info: ModelInfo;
  /** Its sessions are `s<n>` from this n on; lower numbers belonged to models it replaced. */
  firstSessionNumber: number;
  /** Engine session ids whose turns a load cut short: their ends are reported as 'model_changed'. */
  cutByLoad: Set<string>;
  cutMessage: string;
}

export class EngineHost extends Subscriptions<StepEvent, EngineNotice> implements HostApi {
  private loaded: Loaded | null = null;
  private loading: Promise<ModelInfo> | null = null;
  private mode: EngineMode = 'batched';
  private stepBudget: StepBudget | null = { ...DEFAULT_STEP_BUDGET };
  // The host's own listeners outlive each model's EngineCore: a swap keeps every subscription.
  private recovering: Promise<void> | null = null;
  /** Host session numbers handed out so far, every model together. */
  private sessionsMade = 0;

  constructor(private readonly options: EngineHostOptions) {
    super();
  }

  get modelInfo(): ModelInfo | null {
    return this.loaded?.info ?? null;
  }

  /** Loads a model; the current one keeps serving until the new one is fully ready. */
  async loadModel(source: ModelSource, onProgress?: (p: LoadProgress) => void, kvOptions?: KvCacheOptions): Promise<ModelInfo> {
    if (this.loading) throw new ModelLoadFailure('load_in_progress', 'a model is already loading: wait for it to finish');
    const shapeProblem = kvOptionsShapeProblem(kvOptions);
    if (shapeProblem) throw kvFailure(shapeProblem);
    const kv: KvPoolRequest = { kvCacheType: kvOptions?.kvCacheType ?? DEFAULT_KV_CACHE_TYPE, ...(kvOptions?.kvCacheBytes !== undefined ? { kvCacheBytes: kvOptions.kvCacheBytes } : {}) };
    this.loading = this.load(source, kv, onProgress);
    try {
      return await this.loading;
    } finally {
      this.loading = null;
    }
  }

  private async load(source: ModelSource, kv: KvPoolRequest, onProgress?: (p: LoadProgress) => void): Promise<ModelInfo> {
    const fetchProgress: ProgressCallback = (p) =>
      onProgress?.({ phase: 'fetch', loadedBytes: p.bytesDone, totalBytes: p.bytesTotal, message: `reading ${describeSource(source)}` });
    const opened = await openModelSource(source, this.options, fetchProgress);
    const fitProblem = kvOptionsModelProblem(kv, opened.desc.config);
    if (fitProblem) throw kvFailure(fitProblem);
    onProgress?.({ phase: 'upload', loadedBytes: 0, totalBytes: weightBytes(opened.desc), message: 'uploading weights and sizing the KV pool' });
    const runner = await this.options.makeRunner(opened.desc, kv).catch((err: unknown) => Promise.reject(toLoadFailure(err)));
    const firstSessionNumber = this.sessionsMade + 1;
    const constraints = lazyXGrammar(opened.tokenizer, opened.desc.config.vocabSize, opened.toolCallFormat);
    const engine = new EngineCore({ runner, tokenizer: opened.tokenizer, chatTemplate: opened.chatTemplate, mode: this.mode, stepBudget: this.stepBudget, firstSessionNumber, constraints });
    const info: ModelInfo = { ...describeModel(opened, runner, runner.kvCacheType ?? kv.kvCacheType), contextTokens: engine.scheduler.contextLimit };
    const previous = this.loaded;
    const loaded: Loaded = { opened, kv, engine, info, firstSessionNumber, cutByLoad: new Set(), cutMessage: '' };
    this.loaded = loaded;
    engine.subscribe((event) => this.steps.emit(this.hostEvent(loaded, event)));
    if (previous) await this.retire(previous, `${info.name} was loaded in place of ${previous.info.name} during this turn: send it again`);
    onProgress?.({ phase: 'ready', loadedBytes: info.weightBytes, totalBytes: info.weightBytes, message: `${info.name} ready` });
    return info;
  }

  /**
   * Ends a replaced model: every turn in flight ends now (its last step event says 'model_changed'
   * and why), then its loop and runner go. Its sessions go with it; their ids are never reused.
   */
  private async retire(old: Loaded, message: string): Promise<void> {
    old.cutMessage = message;
    for (const session of old.engine.sessions.list()) {
      if (session.state !== 'waiting' && session.state !== 'prefill' && session.state !== 'decode') continue;
      old.cutByLoad.add(session.sessionId);
      old.engine.cancel(session.sessionId);
    }
    await old.engine.whenIdle(); // the cancelled turns end in the old loop's next step
    await old.engine.dispose(); // no step in flight once this resolves, so its runner may go
    old.engine.runner.dispose();
  }

  /** An engine's step event as the host reports it: a turn cut by a load says so (only then a copy). */
  private hostEvent(loaded: Loaded, event: StepEvent): StepEvent {
    const cut = loaded.cutByLoad;
    if (cut.size === 0) return event;
    const finished = event.finished.map((f) => (f.reason === 'cancelled' && cut.has(f.sessionId) ? { ...f, reason: 'error' as const, code: MODEL_CHANGED, error: loaded.cutMessage } : f));
    return { ...event, finished };
  }

  /**
   * The engine session behind host id `sessionId`. A session of a model since replaced (or
   * unloaded) is gone with it: `ifReplaced` says what the call does then (nothing, or throw).
   */
  private session(sessionId: SessionId, ifReplaced: 'ignore' | 'throw'): { engine: EngineCore; id: string; loaded: Loaded } | null {
    const loaded = this.loaded;
    const n = sessionNumber(sessionId);
    if (n !== null && n <= this.sessionsMade && (!loaded || n < loaded.firstSessionNumber)) {
      if (ifReplaced === 'ignore') return null;
      throw new ModelChangedFailure(`session ${sessionId} belonged to a model that was ${loaded ? `replaced by ${loaded.info.name}` : 'unloaded'}: create a new session`);
    }
    if (!loaded) throw new Error('no model is loaded yet');
    return { engine: loaded.engine, id: sessionId, loaded };
  }

  async createSession(options: SessionOptions = {}): Promise<SessionId> {
    const loaded = this.loaded;
    if (!loaded) throw new Error('no model is loaded yet');
    // a bias for an id past the vocabulary names no logit: refused, like OpenAI's invalid token id
    const bias: unknown = options.sampling?.logitBias;
    if (typeof bias === 'object' && bias !== null) {
      const vocabSize = loaded.info.vocabSize;
      const outside = Object.keys(bias).find((key) => /^[0-9]+$/.test(key) && Number(key) >= vocabSize);
      if (outside !== undefined) throw new InvalidOptionError('sampling.logitBias', outside, `token ids from 0 to ${vocabSize - 1} (the model's vocabulary)`);
    }
    // tool_choice 'auto' on a model whose template shows no call format Cohort knows: unconstrained
    // (its calls are still parsed), as ModelInfo.toolCallFormat null says
    if ((options.sampling?.constraint as { kind?: unknown } | undefined)?.kind === 'tool_calls' && loaded.opened.toolCallFormat === null) {
      const { constraint: _unconstrained, ...sampling } = options.sampling!;
      options = { ...options, sampling };
    }
    // a constraint is compiled (and cached) before the session exists, so one that cannot be is
    // refused here, naming the option, rather than ending the session's first turn
    const constraint: unknown = options.sampling?.constraint;
    if (constraint !== undefined && loaded.engine.constraints) {
      validateConstraint(constraint);
      const c = constraint as NonNullable<NonNullable<SessionOptions['sampling']>['constraint']>;
      await loaded.engine.constraints.compile(c).catch((err: unknown) => {
        throw new InvalidOptionError('sampling.constraint', c.kind, `a constraint XGrammar can compile (${err instanceof Error ? err.message : String(err)})`);
      });
      if (this.loaded !== loaded) throw new Error('the model changed while the response format compiled: send it again');
    }
    const id = loaded.engine.createSession(options);
    this.sessionsMade++;
    return id;
  }

  async send(sessionId: SessionId, input: SendInput): Promise<void> {
    const { engine, id } = this.session(sessionId, 'throw')!;
    // a turn of messages is the engine's to check; anything else not text is token ids
    const messages = typeof input === 'object' && input !== null && !ArrayBuffer.isView(input) && !Array.isArray(input) && 'messages' in input;
    if (typeof input !== 'string' && !messages) {
      // Ids index the embedding table: one outside it would read another row's memory or none.
      const vocabSize = this.loaded?.info.vocabSize ?? 0;
      const bad = Array.from(input).find((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize);
      if (bad !== undefined) throw new Error(`token id ${bad} is outside the vocabulary (0 to ${vocabSize - 1})`);
    }
    engine.send(id, typeof input === 'string' || messages ? input : Array.from(input as ArrayLike<number>));
  }

  async cancel(sessionId: SessionId): Promise<void> {
    const s = this.session(sessionId, 'ignore');
    s?.engine.cancel(s.id);
  }

  async resetSession(sessionId: SessionId): Promise<void> {
    const { engine, id } = this.session(sessionId, 'throw')!;
    engine.resetSession(id);
  }

  /** A replaced model's session is already closed: closing it again is no error. */
  async closeSession(sessionId: SessionId): Promise<void> {
    const s = this.session(sessionId, 'ignore');
    s?.engine.closeSession(s.id);
  }

  async waitForTurn(sessionId: SessionId): Promise<TurnResult> {
    const { engine, id, loaded } = this.session(sessionId, 'throw')!;
    const result = await engine.waitForTurn(id);
    const cut = result.finishReason === 'cancelled' && loaded.cutByLoad.has(id);
    return cut ? { ...result, finishReason: 'error', error: loaded.cutMessage } : result;
  }

  async getSession(sessionId: SessionId): Promise<SessionSnapshot> {
    const { engine, id } = this.session(sessionId, 'throw')!;
    return engine.sessions.get(id);
  }

  async currentModel(): Promise<ModelInfo | null> {
    return this.modelInfo;
  }

  async unloadModel(): Promise<void> {
    if (this.loading) throw new Error('a model is loading: wait for it to finish before unloading');
    const loaded = this.loaded;
    if (!loaded) return;
    this.loaded = null; // from now on every call sees no model, as after the unload; its session ids are not reused
    // every turn ends as cancelled (its waiters answered, its blocks freed) before the loop stops
    for (const session of loaded.engine.sessions.list()) loaded.engine.cancel(session.sessionId);
    await loaded.engine.whenIdle();
    await loaded.engine.dispose();
    loaded.engine.runner.dispose();
  }

  async setMode(mode: EngineMode): Promise<void> {
    this.mode = mode;
    this.loaded?.engine.setMode(mode);
  }

  async setStepBudget(budget: StepBudget | null): Promise<void> {
    this.stepBudget = validateStepBudget(budget);
    this.loaded?.engine.setStepBudget(this.stepBudget);
  }

  async ping(): Promise<true> {
    return true;
  }

  /**
   * The runner's device is gone (GPU reset, driver update, destroy()): stop stepping, build a
   * new runner from the model still in memory, and carry every session on with it. Turns whose
   * step was in flight end with the runner's error; the others recompute their KV and go on.
   */
  recoverRunner(reason: string): Promise<void> {
    this.recovering ??= this.recover(reason).finally(() => (this.recovering = null));
    return this.recovering;
  }

  private async recover(reason: string): Promise<void> {
    const loaded = this.loaded;
    if (!loaded) return;
    loaded.engine.suspend();
    this.notify({ kind: 'gpu-lost', message: `${reason}; re-creating the device and reloading ${loaded.info.name}` });
    try {
      const runner = await this.options.makeRunner(loaded.opened.desc, loaded.kv);
      const old = loaded.engine.runner;
      await loaded.engine.replaceRunner(runner); // waits out the step in flight on the old one
      old.dispose();
      this.notify({ kind: 'gpu-restored', message: `GPU device re-created and ${loaded.info.name} reloaded; turns that were mid-step when it was lost ended with an error and can be sent again` });
    } catch (err) {
      // no runner to step on: every turn ends with the reason instead of waiting for good
      await loaded.engine.failAll(new Error(`the GPU device could not be re-created: ${(err as Error).message}`));
      this.notify({ kind: 'gpu-failed', message: `the GPU device could not be re-created (${(err as Error).message}); load a model again or reload the page` });
    }
  }

  private notify(notice: EngineNotice): void {
    this.notices.emit(notice);
  }
}

function kvFailure(problem: KvOptionProblem): ModelLoadFailure {
  return new ModelLoadFailure('invalid_kv_cache', problem.message, problem.param);
}
