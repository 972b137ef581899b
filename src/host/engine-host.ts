// EngineHost: the EngineApi over EngineCore and a runner factory (model swap, sessions, step and
// notice subscriptions, GPU-loss recovery). Pure and runner-agnostic: no DOM, GPU or comlink.
import { EngineCore } from '../engine/engine-core';
import { Subscriptions } from '../engine/listeners';
import type { EngineMode, SessionSnapshot, StepEvent } from '../engine/events';
import type { TurnResult } from '../engine/sessions';
import { DEFAULT_STEP_BUDGET, validateStepBudget, type StepBudget } from '../engine/step-budget';
import type { ModelRunner } from '../engine/types';
import type { ProgressCallback } from '../model/byte-source';
import type { ModelDesc } from '../model/desc';
import type { OpenedModel } from '../model/open-model';
import { openModelSource, type SourceOptions } from '../model/open-source';
import type { EngineNotice, HostApi, LoadProgress, ModelInfo, ModelSource, SendInput, SessionId, SessionOptions } from '../protocol/api';
import { describeSource } from '../protocol/model-source';
import { describeModel, weightBytes } from './model-info';

export type RunnerFactory = (desc: ModelDesc) => Promise<ModelRunner>;

export interface EngineHostOptions extends SourceOptions {
  makeRunner: RunnerFactory;
}

interface Loaded {
  opened: OpenedModel;
  runner: ModelRunner;
  engine: EngineCore;
  info: ModelInfo;
}

export class EngineHost extends Subscriptions<StepEvent, EngineNotice> implements HostApi {
  private loaded: Loaded | null = null;
  private loading: Promise<ModelInfo> | null = null;
  private mode: EngineMode = 'batched';
  private stepBudget: StepBudget | null = { ...DEFAULT_STEP_BUDGET };
  // The host's own listeners outlive each model's EngineCore: a swap keeps every subscription.
  private recovering: Promise<void> | null = null;

  constructor(private readonly options: EngineHostOptions) {
    super();
  }

  get modelInfo(): ModelInfo | null {
    return this.loaded?.info ?? null;
  }

  /** Loads a model; the current one keeps serving until the new one is fully ready. */
  async loadModel(source: ModelSource, onProgress?: (p: LoadProgress) => void): Promise<ModelInfo> {
    if (this.loading) throw new Error('a model is already loading: wait for it to finish');
    this.loading = this.load(source, onProgress);
    try {
      return await this.loading;
    } finally {
      this.loading = null;
    }
  }

  private async load(source: ModelSource, onProgress?: (p: LoadProgress) => void): Promise<ModelInfo> {
    const fetchProgress: ProgressCallback = (p) =>
      onProgress?.({ phase: 'fetch', loadedBytes: p.bytesDone, totalBytes: p.bytesTotal, message: `reading ${describeSource(source)}` });
    const opened = await openModelSource(source, this.options, fetchProgress);
    onProgress?.({ phase: 'upload', loadedBytes: 0, totalBytes: weightBytes(opened.desc), message: 'uploading weights and sizing the KV pool' });
    const runner = await this.options.makeRunner(opened.desc);
    const engine = new EngineCore({ runner, tokenizer: opened.tokenizer, chatTemplate: opened.chatTemplate, mode: this.mode, stepBudget: this.stepBudget });
    const info: ModelInfo = { ...describeModel(opened, runner), contextTokens: engine.scheduler.contextLimit };
    const previous = this.loaded;
    this.loaded = { opened, runner, engine, info };
    engine.subscribe((event) => this.steps.emit(event));
    if (previous) {
      previous.engine.dispose();
      previous.runner.dispose();
    }
    onProgress?.({ phase: 'ready', loadedBytes: info.weightBytes, totalBytes: info.weightBytes, message: `${info.name} ready` });
    return info;
  }

  private engine(): EngineCore {
    if (!this.loaded) throw new Error('no model is loaded yet');
    return this.loaded.engine;
  }

  async createSession(options: SessionOptions = {}): Promise<SessionId> {
    return this.engine().createSession(options);
  }

  async send(sessionId: SessionId, input: SendInput): Promise<void> {
    if (typeof input !== 'string') {
      // Ids index the embedding table: one outside it would read another row's memory or none.
      const vocabSize = this.loaded?.info.vocabSize ?? 0;
      const bad = Array.from(input).find((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
      if (bad !== undefined) throw new Error(`token id ${bad} is outside the vocabulary (0 to ${vocabSize - 1})`);
    }
    this.engine().send(sessionId, typeof input === 'string' ? input : Array.from(input));
  }

  async cancel(sessionId: SessionId): Promise<void> {
    this.engine().cancel(sessionId);
  }

  async resetSession(sessionId: SessionId): Promise<void> {
    this.engine().resetSession(sessionId);
  }

  async closeSession(sessionId: SessionId): Promise<void> {
    this.engine().closeSession(sessionId);
  }

  waitForTurn(sessionId: SessionId): Promise<TurnResult> {
    return this.engine().waitForTurn(sessionId);
  }

  async getSession(sessionId: SessionId): Promise<SessionSnapshot> {
    return this.engine().sessions.get(sessionId);
  }

  async currentModel(): Promise<ModelInfo | null> {
    return this.modelInfo;
  }

  async unloadModel(): Promise<void> {
    if (this.loading) throw new Error('a model is loading: wait for it to finish before unloading');
    const loaded = this.loaded;
    if (!loaded) return;
    this.loaded = null; // from now on every call sees no model, as after the unload
    // every turn ends as cancelled (its waiters answered, its blocks freed) before the loop stops
    for (const session of loaded.engine.sessions.list()) loaded.engine.cancel(session.sessionId);
    await loaded.engine.whenIdle();
    loaded.engine.dispose();
    loaded.runner.dispose();
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
      const runner = await this.options.makeRunner(loaded.opened.desc);
      await loaded.engine.replaceRunner(runner); // waits out the step in flight on the old one
      loaded.runner.dispose();
      loaded.runner = runner;
      this.notify({ kind: 'gpu-restored', message: `GPU device re-created and ${loaded.info.name} reloaded; turns that were mid-step when it was lost ended with an error and can be sent again` });
    } catch (err) {
      this.notify({ kind: 'gpu-failed', message: `the GPU device could not be re-created (${(err as Error).message}); load a model again or reload the page` });
    }
  }

  private notify(notice: EngineNotice): void {
    this.notices.emit(notice);
  }
}
