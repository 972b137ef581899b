// EngineHost: what the worker exposes as EngineApi, minus the GPU self-check: model loading from
// every source, the engine and its sessions. Runner-agnostic so Node tests run it on CpuRunner.
import { EngineCore } from '../src/engine/engine-core';
import type { EngineMode, StepEvent } from '../src/engine/events';
import type { TurnResult } from '../src/engine/sessions';
import type { ModelRunner } from '../src/engine/types';
import { blobSource, urlOpener, urlSource, mapOpener, type ByteSource, type FileOpener, type ProgressCallback } from '../src/model/byte-source';
import type { ModelDesc } from '../src/model/desc';
import { cachedUrlOpener, cachedUrlSource, type BlobStore } from '../src/model/download-cache';
import { openGgufModel, openHfModel, type OpenedModel } from '../src/model/open-model';
import type { EngineApi, EngineNotice, LoadProgress, ModelInfo, ModelSource, SendInput, SessionId, SessionOptions } from '../src/protocol/api';

export type RunnerFactory = (desc: ModelDesc) => Promise<ModelRunner>;

export interface EngineHostOptions {
  makeRunner: RunnerFactory;
  /** Base URL of the embedded default model's folder. */
  embeddedModelUrl: string;
  /** Origin of the page: URL sources must be https or this origin. */
  pageOrigin?: string;
  fetchFn?: typeof fetch;
  /** Where downloaded model files are kept (Cache Storage in the browser); none: read in ranges. */
  downloadStore?: BlobStore;
}

interface Loaded {
  opened: OpenedModel;
  runner: ModelRunner;
  engine: EngineCore;
  info: ModelInfo;
}

const HF_BASE = 'https://huggingface.co';

export class EngineHost {
  private loaded: Loaded | null = null;
  private loading: Promise<ModelInfo> | null = null;
  private mode: EngineMode = 'batched';
  private readonly listeners = new Map<number, (event: StepEvent) => void>();
  private readonly noticeListeners = new Map<number, (notice: EngineNotice) => void>();
  private recovering: Promise<void> | null = null;
  private nextListenerId = 1;

  constructor(private readonly options: EngineHostOptions) {}

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
    const opened = await this.open(source, fetchProgress);
    onProgress?.({ phase: 'upload', loadedBytes: 0, totalBytes: weightBytes(opened.desc), message: 'uploading weights and sizing the KV pool' });
    const runner = await this.options.makeRunner(opened.desc);
    const engine = new EngineCore({ runner, tokenizer: opened.tokenizer, chatTemplate: opened.chatTemplate, mode: this.mode });
    const info = describeModel(opened, runner);
    const previous = this.loaded;
    this.loaded = { opened, runner, engine, info };
    engine.subscribe((event) => this.emit(event));
    if (previous) {
      previous.engine.dispose();
      previous.runner.dispose();
    }
    onProgress?.({ phase: 'ready', loadedBytes: info.weightBytes, totalBytes: info.weightBytes, message: `${info.name} ready` });
    return info;
  }

  private async open(source: ModelSource, onProgress: ProgressCallback): Promise<OpenedModel> {
    const fetchFn = this.options.fetchFn ?? fetch;
    switch (source.kind) {
      case 'embedded':
        return openHfModel(urlOpener(this.options.embeddedModelUrl, fetchFn), 'cohort-tiny (embedded)', onProgress);
      case 'huggingface': {
        if (!/^[\w.-]+\/[\w.-]+$/.test(source.repoId)) throw new Error(`"${source.repoId}" is not a Hugging Face repo id (owner/name)`);
        const base = `${HF_BASE}/${source.repoId}/resolve/${encodeURIComponent(source.revision ?? 'main')}`;
        if (source.file) return openGgufModel(await this.remoteFile(`${base}/${encodeURIComponent(source.file)}`, onProgress), onProgress);
        return openHfModel(this.remoteFolder(base, onProgress), source.repoId, onProgress);
      }
      case 'url': {
        const url = this.checkUrl(source.url);
        if (url.pathname.toLowerCase().endsWith('.gguf')) return openGgufModel(await this.remoteFile(url.href, onProgress), onProgress);
        return openHfModel(this.remoteFolder(url.href, onProgress), url.href, onProgress);
      }
      case 'files': {
        const gguf = source.files.filter((f) => f.name.toLowerCase().endsWith('.gguf'));
        if (gguf.length === 1) return openGgufModel(blobSource(gguf[0], gguf[0].name), onProgress);
        if (gguf.length > 1) throw new Error(`${gguf.length} GGUF files were given: pick one`);
        const files = new Map<string, Blob>(source.files.map((f) => [f.name, f]));
        return openHfModel(mapOpener(files), folderName(source.files), onProgress);
      }
    }
  }

  /** A downloaded file: kept in the download store when there is one, else read in ranges. */
  private remoteFile(url: string, onProgress: ProgressCallback): Promise<ByteSource> {
    const { downloadStore, fetchFn = fetch } = this.options;
    return downloadStore ? cachedUrlSource(url, downloadStore, fetchFn, onProgress) : urlSource(url, fetchFn);
  }

  private remoteFolder(baseUrl: string, onProgress: ProgressCallback): FileOpener {
    const { downloadStore, fetchFn = fetch } = this.options;
    return downloadStore ? cachedUrlOpener(baseUrl, downloadStore, fetchFn, onProgress) : urlOpener(baseUrl, fetchFn);
  }

  /** Only https, or the page's own origin (where the embedded model lives), may be fetched. */
  private checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw, this.options.pageOrigin);
    } catch {
      throw new Error(`"${raw}" is not a URL`);
    }
    if (url.protocol !== 'https:' && url.origin !== this.options.pageOrigin) {
      throw new Error(`only https:// URLs (or this page's own origin) can be loaded, not ${url.protocol}//`);
    }
    return url;
  }

  private engine(): EngineCore {
    if (!this.loaded) throw new Error('no model is loaded yet');
    return this.loaded.engine;
  }

  createSession(options: SessionOptions = {}): SessionId {
    return this.engine().createSession(options);
  }

  send(sessionId: SessionId, input: SendInput): void {
    if (typeof input !== 'string') {
      // Ids index the embedding table: one outside it would read another row's memory or none.
      const vocabSize = this.loaded?.info.vocabSize ?? 0;
      const bad = Array.from(input).find((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
      if (bad !== undefined) throw new Error(`token id ${bad} is outside the vocabulary (0 to ${vocabSize - 1})`);
    }
    this.engine().send(sessionId, typeof input === 'string' ? input : Array.from(input));
  }

  cancel(sessionId: SessionId): void {
    this.engine().cancel(sessionId);
  }

  resetSession(sessionId: SessionId): void {
    this.engine().resetSession(sessionId);
  }

  closeSession(sessionId: SessionId): void {
    this.engine().closeSession(sessionId);
  }

  waitForTurn(sessionId: SessionId): Promise<TurnResult> {
    return this.engine().waitForTurn(sessionId);
  }

  setMode(mode: EngineMode): void {
    this.mode = mode;
    this.loaded?.engine.setMode(mode);
  }

  subscribe(onStep: (event: StepEvent) => void): number {
    const id = this.nextListenerId++;
    this.listeners.set(id, onStep);
    return id;
  }

  subscribeNotices(onNotice: (notice: EngineNotice) => void): number {
    const id = this.nextListenerId++;
    this.noticeListeners.set(id, onNotice);
    return id;
  }

  unsubscribe(id: number): void {
    this.listeners.delete(id);
    this.noticeListeners.delete(id);
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
    for (const listener of this.noticeListeners.values()) {
      try {
        listener(notice);
      } catch (err) {
        console.error('notice subscriber failed', err);
      }
    }
  }

  private emit(event: StepEvent): void {
    for (const listener of this.listeners.values()) {
      try {
        listener(event);
      } catch (err) {
        console.error('step subscriber failed', err);
      }
    }
  }
}

function weightBytes(desc: ModelDesc): number {
  let n = 0;
  for (const t of desc.tensors.values()) n += t.data.byteLength;
  return n;
}

function describeModel(opened: OpenedModel, runner: ModelRunner): ModelInfo {
  const { desc } = opened;
  const c = desc.config;
  let numParams = 0;
  const dtypes = new Set<string>();
  for (const t of desc.tensors.values()) {
    numParams += t.shape.reduce((a, b) => a * b, 1);
    dtypes.add(t.dtype);
  }
  return {
    name: opened.name,
    arch: c.arch,
    numLayers: c.numLayers,
    hiddenSize: c.hiddenSize,
    vocabSize: c.vocabSize,
    maxPositionEmbeddings: c.maxPositionEmbeddings,
    dtypes: [...dtypes].sort(),
    numParams,
    weightBytes: weightBytes(desc),
    blockSize: runner.blockSize,
    numBlocks: runner.numBlocks,
    ...(opened.templateNote ? { templateNote: opened.templateNote } : {}),
  };
}

function describeSource(source: ModelSource): string {
  switch (source.kind) {
    case 'embedded':
      return 'the embedded model';
    case 'huggingface':
      return source.repoId + (source.file ? `/${source.file}` : '');
    case 'url':
      return source.url;
    case 'files':
      return `${source.files.length} local file(s)`;
  }
}

function folderName(files: File[]): string {
  const rel = (files[0] as File & { webkitRelativePath?: string }).webkitRelativePath;
  return rel ? rel.split('/')[0] : `${files.length} local files`;
}

/** EngineApi's engine methods over a host: shared by the browser worker and the Node worker. */
export function hostApi(host: EngineHost): Omit<EngineApi, 'gpuInfo' | 'selfCheck' | 'debugLoseDevice' | 'debugCloseWorker'> {
  return {
    loadModel: (source, onProgress) => host.loadModel(source, onProgress),
    createSession: async (options) => host.createSession(options),
    send: async (sessionId, input) => host.send(sessionId, input),
    cancel: async (sessionId) => host.cancel(sessionId),
    resetSession: async (sessionId) => host.resetSession(sessionId),
    closeSession: async (sessionId) => host.closeSession(sessionId),
    waitForTurn: (sessionId) => host.waitForTurn(sessionId),
    setMode: async (mode) => host.setMode(mode),
    subscribe: async (onStep) => host.subscribe(onStep),
    subscribeNotices: async (onNotice) => host.subscribeNotices(onNotice),
    unsubscribe: async (id) => host.unsubscribe(id),
    ping: async () => true,
  };
}
