// The one worker API (EngineApi) and the plain data it carries between worker and UI.
// Data and types only: no behaviour, no comlink, no DOM; both sides import it.

/** Cache Storage name for downloaded model files: the worker writes it, the page lists and deletes. */
export const MODEL_CACHE_NAME = 'cohort-models';
import type { SessionOptions } from '../engine/session-options';
import type { StepBudget } from '../engine/step-budget';
import type { ToolCallFormatName } from './tool-call-format';
import type { ChatMessage, OutputConstraint, SamplingParams, ToolCall, ToolDefinition } from '../engine/types';
import type { ConversationMessage, TurnMessages } from '../engine/chat-messages';
import type { EngineMode, SessionSnapshot, StepEvent, TurnResult } from './events';
import type { KvCacheOptions, KvCacheType } from './kv-options';
import type { ServerInfo } from './server';

/** The engine's own shapes, not copies: SessionOptions out of bounds (src/engine/session-options.ts) make createSession reject with an InvalidOptionError. */
export type { SamplingParams, SessionOptions, StepBudget };
export type { ChatMessage, ConversationMessage, OutputConstraint, ToolCall, ToolDefinition, TurnMessages };

export type SessionId = string;

export type { KvCacheOptions, KvCacheType };

/** Where a model comes from. Only data formats are accepted: never code, never pickle. */
export type ModelSource =
  | { kind: 'embedded' }
  | { kind: 'huggingface'; repoId: string; revision?: string; /** A .gguf file in the repo; else the HF layout. */ file?: string }
  | { kind: 'url'; url: string }
  | { kind: 'files'; files: File[] }
  /** An OpenAI-compatible server (llama.cpp's llama-server, vLLM): the page drives it, it holds the model. */
  | { kind: 'server'; baseUrl: string; apiKey?: string; /** The served model's id; else the first of /v1/models. */ model?: string };

export interface LoadProgress {
  phase: 'fetch' | 'parse' | 'upload' | 'ready';
  loadedBytes: number;
  /** 0 when unknown (e.g. a response without Content-Length). */
  totalBytes: number;
  message: string;
}

export interface ModelInfo {
  name: string;
  arch: string;
  numLayers: number;
  hiddenSize: number;
  vocabSize: number;
  maxPositionEmbeddings: number;
  /** Stored weight encodings present, e.g. ['q8_0', 'f32']. */
  dtypes: string[];
  numParams: number;
  weightBytes: number;
  /** KV pool geometry chosen at load from the adapter's limits and the memory budget. */
  blockSize: number;
  numBlocks: number;
  /** How the pool stores K and V; absent when a server serves the model. */
  kvCacheType?: KvCacheType;
  /** K + V bytes of one token position over every layer in that type (0 when a server serves it). */
  kvBytesPerToken: number;
  /** Most tokens one request may hold, prompt and output: the model's context or the KV pool, whichever is less. */
  contextTokens: number;
  /** Set when the model has no chat template and a fallback is used. */
  templateNote?: string;
  /**
   * How a request's `tools` reach the model: 'template' through its chat template's `tools`
   * variable, 'system-prompt' as an instruction listing them added to the system prompt (a
   * template that does not write `tools`). Absent when a server serves the model.
   */
  toolsRendering?: 'template' | 'system-prompt';
  /**
   * The format the model writes tool calls in (src/protocol/tool-call-format.ts): under
   * tool_choice 'auto' its replies are text until a call opens, then the call is held to a tool's
   * schema. null: its template shows no format Cohort knows, and 'auto' is unconstrained. Absent
   * when a server serves the model.
   */
  toolCallFormat?: ToolCallFormatName | null;
  /** The tokens that end a generation, ascending by id (absent when a server serves the model). */
  endTokens?: Array<{ id: number; content: string }>;
  /** Added tokens past the embedding rows, set aside at load: never matched in text, never produced. */
  setAsideTokens?: Array<{ id: number; content: string }>;
  /** [numLayers] each layer's attention window (0: every position), set only when some layer slides (gemma). */
  layerWindows?: number[];
  /**
   * The runner's KV cache groups, each a pool of its own: its blocks (block 0 included), its kind
   * (window null: full attention; a number: a sliding window whose blocks go back once out of it)
   * and its layers' K + V bytes per token (together kvBytesPerToken). The first is the pool
   * numBlocks counts. Absent when a server serves the model.
   */
  kvGroups?: KvGroupInfo[];
  /** Set when a server serves the model: then the fields above it cannot know are 0 or empty. */
  server?: ServerInfo;
}

/** One KV cache group's pool on the model card (ModelInfo.kvGroups). */
export interface KvGroupInfo {
  numBlocks: number;
  window: number | null;
  bytesPerToken: number;
}

/**
 * A turn: a user message as text, the turn's messages (tool results, a user message) in
 * `{ messages }` (both templated by the model's chat template with the session's tools), or raw token ids.
 */
export type SendInput = string | Int32Array | TurnMessages;

export interface AdapterDescription {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  isFallbackAdapter: boolean;
}

/** What the worker found: an adapter and device, or why there is none. */
export type GpuInfo =
  | {
      status: 'ok';
      adapter: AdapterDescription;
      /** Adapter features, sorted. */
      features: string[];
      /** Features enabled on the engine's device, sorted. */
      deviceFeatures: string[];
      /** Device limits (raised to the adapter's where the engine needs it). */
      limits: Record<string, number>;
    }
  | {
      status: 'unavailable';
      reason: 'no-webgpu' | 'no-adapter' | 'device-failed';
      message: string;
    };

/** Result of running shaders/matmul.wgsl's residual accumulate on fixed inputs (values = a + b) and comparing with its CPU twins. */
export interface SelfCheckResult {
  ok: boolean;
  /** Largest |gpu - cpu| over all elements (0 when bitwise equal). */
  maxAbsError: number;
  numElements: number;
  /** The inputs and the kernel's output, for anyone to re-check (numElements each). */
  a: number[];
  b: number[];
  values: number[];
  /** Output slots past numElements that the kernel must leave untouched. */
  paddingIntact: boolean;
  elapsedMs: number;
}

/**
 * Engine-wide notices, outside the step stream: the GPU device was lost, then re-created with
 * the model reloaded (turns in flight at the loss end with an error; the rest carry on), or not.
 */
export interface EngineNotice {
  kind: 'gpu-lost' | 'gpu-restored' | 'gpu-failed';
  message: string;
}

/**
 * Every verb a host serves (src/host/engine-host.ts on the local engine, src/remote/server-host.ts
 * on a server), each declared here once: BackendRouter forwards, and the page's and the library's
 * comlink wrapper (src/lib/remote.ts) passes through, whatever is listed here.
 */
export interface HostApi {
  /**
   * Loads a model with its KV pool: `kv` names the storage type and pool size (src/protocol/kv-options.ts;
   * a bad one rejects with InvalidKvCacheError, its message starting with the option's name). A server ignores it.
   */
  loadModel(source: ModelSource, onProgress?: (progress: LoadProgress) => void, kv?: KvCacheOptions): Promise<ModelInfo>;
  createSession(options?: SessionOptions): Promise<SessionId>;
  send(sessionId: SessionId, input: SendInput): Promise<void>;
  cancel(sessionId: SessionId): Promise<void>;
  closeSession(sessionId: SessionId): Promise<void>;
  resetSession(sessionId: SessionId): Promise<void>;
  /** Resolves when the session's current turn ends (at once if none is running). */
  waitForTurn(sessionId: SessionId): Promise<TurnResult>;
  /** The session's state and its current (or last) turn's stats: tokens in and out, cached tokens. */
  getSession(sessionId: SessionId): Promise<SessionSnapshot>;
  /** The model serving now, or null before the first load and after unloadModel(). */
  currentModel(): Promise<ModelInfo | null>;
  /** Cancels every turn, waits for them to end, and frees the model, its runner and KV pool. */
  unloadModel(): Promise<void>;
  setMode(mode: EngineMode): Promise<void>;
  /**
   * Holds each step to a time budget so a long prompt never freezes decoding sessions: prefill
   * chunks are sized from a cost model fitted to measured steps, so that a step costs at most
   * `multiple` x its decode rows' own step and at most `maxStepMs`. null = off (the token budget
   * alone, as before). Default { multiple: 1.5 }; kept across model loads. Numbers out of bounds
   * reject with an InvalidOptionError naming the option. StepEvent.stepBudget shows its effect.
   */
  setStepBudget(budget: StepBudget | null): Promise<void>;
  /** One callback per step, never per token. Returns an id for unsubscribe. */
  subscribe(onStep: (event: StepEvent) => void): Promise<number>;
  /** Engine notices (GPU loss and recovery). Returns an id for unsubscribe. */
  subscribeNotices(onNotice: (notice: EngineNotice) => void): Promise<number>;
  unsubscribe(subscriptionId: number): Promise<void>;
  /** Answers at once while the worker's event loop runs: the page's watchdog. */
  ping(): Promise<true>;
}

/** What the engine worker serves: every host verb plus those that need the worker's own device and scope. */
export interface EngineApi extends HostApi {
  gpuInfo(): Promise<GpuInfo>;
  selfCheck(): Promise<SelfCheckResult>;
  /** Debug hook: stops the worker for good (as a crash would), to exercise the page's restart. */
  debugCloseWorker(): Promise<void>;
  /** Debug hook: destroys the GPU device as a driver reset would, to exercise recovery. */
  debugLoseDevice(): Promise<void>;
}

/** What the shared worker (workers/engine.shared-worker.ts) serves on each tab's port besides EngineApi. */
export interface TabCalls {
  /** This tab pings at least this often; silent longer than timeoutMs, its sessions are ended. */
  hello(timeoutMs: number): Promise<void>;
  /** This tab is leaving: end its sessions and subscriptions now. */
  goodbye(): Promise<void>;
}

/** What a tab may call on the shared worker's port. */
export type TabApi = EngineApi & TabCalls;
