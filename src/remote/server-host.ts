// ServerHost: the EngineApi over an OpenAI-compatible server (llama.cpp's llama-server, vLLM). Each
// session's turn streams through /v1/chat/completions; the server batches, this host only samples.
import type { EngineMode, FinishedEvent, SessionSnapshot, SessionStats, StepEvent, StepRowEvent, TurnResult, WaitingEvent } from '../protocol/events';
import type { EngineNotice, HostApi, LoadProgress, ModelInfo, ModelSource, SendInput, SessionId, SessionOptions, StepBudget } from '../protocol/api';
import type { ServerSample } from '../protocol/server';
import { InvalidOptionError } from '../engine/errors';
import { Subscriptions } from '../engine/listeners';
import { SessionBook, type SessionRecord, type TurnRecord } from '../engine/session-book';
import { validateStepBudget } from '../engine/step-budget';
import { connectServer, normalizeBaseUrl, type ConnectOptions, type ServerAddress } from './server-connect';
import { ServerError } from './server-errors';
import { ServerPoller } from './server-poller';
import { streamTurn } from './server-turn';

export interface ServerHostOptions extends ConnectOptions {
  /** How often the cohort view samples the streams and the server's counters, in ms. */
  sampleEveryMs?: number;
  now?: () => number;
}

/** A turn streamed from the server; history, waiters and close are the session's record (engine/session-book.ts). */
interface Turn extends TurnRecord {
  controller: AbortController;
  started: boolean;
  numTokensOut: number;
  /** Delivered since the last sample. */
  pendingText: string;
  numPendingTokens: number;
  /** Whether a sample has shown one of its rows (the first one is its prefill). */
  shown: boolean;
  numPromptTokens: number;
  numCachedTokens: number;
  end?: { reason: FinishedEvent['reason']; error?: string };
}

type Session = SessionRecord<Turn>;

interface Connection {
  address: ServerAddress;
  modelId: string;
  info: ModelInfo;
  poller: ServerPoller;
}

/** Accepts notice subscriptions for the API's sake: a server sends no engine notices. */
export class ServerHost extends Subscriptions<StepEvent, EngineNotice> implements HostApi {
  private connection: Connection | null = null;
  private mode: EngineMode = 'batched';
  private readonly sessions = new SessionBook<Turn>('r');
  /** Sessions whose turn was sent and has not yet ended, in arrival order (serialized mode starts them one at a time). */
  private readonly turns: Session[] = [];
  private nextRequestNumber = 1;
  private stepIndex = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastSampleAtMs = 0;
  /** No turn ran since the last sample: the next one starts its interval afresh, not across the idle gap. */
  private idle = true;
  private readonly now: () => number;

  constructor(private readonly options: ServerHostOptions = {}) {
    super();
    this.now = options.now ?? (() => performance.now());
  }

  /** Connects (ServerError when it cannot); the server it replaces, if any, has its turns cancelled. */
  async loadModel(source: ModelSource, onProgress?: (progress: LoadProgress) => void): Promise<ModelInfo> {
    if (source.kind !== 'server') throw new Error(`a server backend connects to a server, not ${source.kind} sources`);
    const address: ServerAddress = { baseUrl: normalizeBaseUrl(source.baseUrl), apiKey: source.apiKey || undefined };
    onProgress?.({ phase: 'fetch', loadedBytes: 0, totalBytes: 0, message: `asking ${address.baseUrl} what it serves` });
    const connected = await connectServer(address, source.model, this.options);
    await this.unloadModel();
    const poller = new ServerPoller(address, connected.server, this.options);
    this.connection = { address, modelId: connected.modelId, info: connected.info, poller };
    onProgress?.({ phase: 'ready', loadedBytes: 0, totalBytes: 0, message: `${connected.info.name} on ${connected.server.kind} ready` });
    return connected.info;
  }

  async currentModel(): Promise<ModelInfo | null> {
    return this.connection?.info ?? null;
  }

  /** Cancels every turn and forgets the server; sessions go with it, as with a model unload. */
  async unloadModel(): Promise<void> {
    if (!this.connection) return;
    const running = this.sessions.all().filter((s) => s.active);
    for (const session of running) session.active!.controller.abort();
    await Promise.all(running.map((s) => s.waitForTurn()));
    this.sessions.clear();
    this.connection = null;
  }

  async createSession(options: SessionOptions = {}): Promise<SessionId> {
    this.connected();
    // the server's stream is read as text: its tokens' logprobs never reach the step events
    if (options.sampling?.logprobs !== undefined) throw new InvalidOptionError('sampling.logprobs', options.sampling.logprobs, 'absent: a server backend does not return logprobs');
    // the server's stream is read as text: its tool-call deltas would be lost, so tools are refused
    if (options.tools !== undefined && options.tools.length > 0) throw new InvalidOptionError('tools', 'a tool list', 'absent: a server backend does not take tools');
    const toolTurn = options.history?.findIndex((m) => m.role === 'tool' || m.toolCalls !== undefined) ?? -1;
    if (toolTurn >= 0) throw new InvalidOptionError(`history[${toolTurn}]`, options.history![toolTurn], 'a user or assistant text message: a server backend does not take tool calls');
    // JSON mode and schemas go to the server as response_format; an EBNF grammar (XGrammar's
    // dialect, not llama.cpp's GBNF) or a regex has no field both servers read alike
    const constraint = options.sampling?.constraint as { kind?: unknown } | undefined;
    if (constraint !== undefined && constraint.kind !== 'json_object' && constraint.kind !== 'json_schema') {
      throw new InvalidOptionError('sampling.constraint', constraint.kind, "json_object or json_schema: a server backend forwards only OpenAI's response formats");
    }
    return this.sessions.create(options).sessionId;
  }

  async send(sessionId: SessionId, input: SendInput): Promise<void> {
    this.connected();
    const session = this.sessions.open(sessionId);
    if (typeof input !== 'string') throw new Error('a server backend takes text turns, not token ids or tool results');
    session.begin(input, () => ({
      requestId: `${sessionId}-t${this.nextRequestNumber++}`,
      controller: new AbortController(),
      started: false,
      text: '',
      numTokensOut: 0,
      pendingText: '',
      numPendingTokens: 0,
      shown: false,
      numPromptTokens: 0,
      numCachedTokens: 0,
    }));
    this.turns.push(session);
    this.startTurns();
    this.schedule();
  }

  async cancel(sessionId: SessionId): Promise<void> {
    this.stop(this.sessions.open(sessionId).active);
  }

  /** Forgets the history; a running turn is cancelled and not recorded. */
  async resetSession(sessionId: SessionId): Promise<void> {
    this.stop(this.sessions.open(sessionId).reset());
  }

  /** A running turn is cancelled; the session goes when it ends, so its waiters still get the result. */
  async closeSession(sessionId: SessionId): Promise<void> {
    this.stop(this.sessions.open(sessionId).close());
  }

  waitForTurn(sessionId: SessionId): Promise<TurnResult> {
    return this.sessions.find(sessionId)?.waitForTurn() ?? Promise.reject(new Error(`no session ${sessionId}`));
  }

  async getSession(sessionId: SessionId): Promise<SessionSnapshot> {
    return this.sessions.open(sessionId).snapshot();
  }

  /** 'serialized' sends one turn at a time, in arrival order: the server's own batching, switched off from here. */
  async setMode(mode: EngineMode): Promise<void> {
    this.mode = mode;
    this.startTurns();
  }

  /** Accepted and checked for the API's sake; the server sizes its own steps. */
  async setStepBudget(budget: StepBudget | null): Promise<void> {
    validateStepBudget(budget);
  }

  async ping(): Promise<true> {
    return true;
  }

  private connected(): Connection {
    if (!this.connection) throw new Error('no model is loaded yet: connect to a server first');
    return this.connection;
  }

  /** Aborts the fetch (the server frees its slot); a turn not started yet ends at once. */
  private stop(turn: Turn | undefined): void {
    if (!turn || turn.end) return;
    turn.controller.abort();
    if (!turn.started) turn.end = { reason: 'cancelled' };
    this.schedule();
  }

  private startTurns(): void {
    for (const session of this.turns) {
      const turn = session.active!;
      if (turn.started || turn.end) continue;
      if (this.mode === 'serialized' && this.turns.some((s) => s.active?.started && !s.active.end)) return;
      turn.started = true;
      void this.run(session, turn);
    }
  }

  private async run(session: Session, turn: Turn): Promise<void> {
    const connection = this.connected();
    try {
      const end = await streamTurn(
        connection.address,
        connection.info.server!.kind,
        {
          modelId: connection.modelId,
          // createSession and send let no tool message or call in: text messages only
          messages: session.conversation().map(({ role, content }) => ({ role: role === 'tool' ? 'user' : role, content })),
          sampling: session.settings.sampling,
          maxTokens: session.settings.maxNewTokens,
          stopStrings: session.settings.stopStrings,
          ignoreEos: session.settings.ignoreEos,
        },
        {
          onDelta: (text, numTokens) => {
            turn.text += text;
            turn.pendingText += text;
            turn.numTokensOut += numTokens;
            turn.numPendingTokens += numTokens;
          },
          onPrompt: (numPromptTokens, numCachedTokens) => {
            turn.numPromptTokens = numPromptTokens;
            turn.numCachedTokens = numCachedTokens;
          },
        },
        turn.controller.signal,
        this.options,
      );
      turn.end = { reason: end.reason };
    } catch (err) {
      // the prompt's size as the server counted it: the library turns this into its ContextLengthError
      if (err instanceof ServerError && err.numPromptTokens !== undefined) turn.numPromptTokens = err.numPromptTokens;
      turn.end = turn.controller.signal.aborted ? { reason: 'cancelled' } : { reason: 'error', error: (err as Error).message };
      if (!(err instanceof ServerError) && !turn.controller.signal.aborted) console.error('server turn failed', err);
    }
    this.startTurns();
    this.schedule();
  }

  /** Samples on a timer while any turn runs, and once more after the last one ends. */
  private schedule(): void {
    if (this.timer !== null) return;
    const everyMs = this.options.sampleEveryMs ?? 250;
    if (this.idle) this.lastSampleAtMs = this.now();
    this.idle = false;
    this.timer = setTimeout(() => void this.sample(), everyMs);
  }

  private async sample(): Promise<void> {
    const connection = this.connection;
    const server: ServerSample | undefined = connection ? await connection.poller.poll() : undefined;
    this.timer = null;
    const event = this.buildEvent(server);
    this.lastSampleAtMs = event.startedAtMs + event.elapsedMs;
    this.steps.emit(event);
    this.endTurns(event.finished);
    if (this.turns.length > 0) this.schedule();
    else this.idle = true;
  }

  private buildEvent(server: ServerSample | undefined): StepEvent {
    const nowMs = this.now();
    const rows: StepRowEvent[] = [];
    const finished: FinishedEvent[] = [];
    const waiting: WaitingEvent[] = [];
    for (const session of this.turns) {
      const turn = session.active!;
      if (turn.numPendingTokens > 0 || turn.pendingText) {
        const kind = turn.shown ? 'decode' : 'prefill';
        rows.push({
          sessionId: session.sessionId,
          requestId: turn.requestId,
          kind,
          numTokens: kind === 'prefill' ? turn.numPromptTokens - turn.numCachedTokens + Math.max(0, turn.numPendingTokens - 1) : turn.numPendingTokens,
          position: kind === 'prefill' ? turn.numCachedTokens : turn.numPromptTokens + turn.numTokensOut - turn.numPendingTokens,
          // the server streams text, not ids: one -1 per token it delivered
          newTokenIds: new Int32Array(turn.numPendingTokens).fill(-1),
          newText: turn.pendingText,
          ...(turn.end ? { finishReason: turn.end.reason } : {}),
        });
        turn.shown = true;
        turn.pendingText = '';
        turn.numPendingTokens = 0;
      } else if (!turn.end) {
        waiting.push({ sessionId: session.sessionId, requestId: turn.requestId, reason: 'queued' });
      }
      if (turn.end) finished.push({ sessionId: session.sessionId, requestId: turn.requestId, reason: turn.end.reason, newText: '', ...(turn.end.error ? { error: turn.end.error } : {}) });
      session.state = turn.end ? session.state : turn.shown ? 'decode' : turn.started ? 'prefill' : 'waiting';
      session.stats = this.statsOf(session, turn);
    }
    return {
      stepIndex: this.stepIndex++,
      startedAtMs: this.lastSampleAtMs,
      elapsedMs: Math.max(0, nowMs - this.lastSampleAtMs),
      rows,
      numTokens: rows.reduce((n, r) => n + r.numTokens, 0),
      finished,
      kvBlocksUsed: 0,
      kvBlocksFree: 0,
      kvBlocksShared: 0,
      kvBlocksCached: 0,
      kvBlocksTotal: 0,
      kvGroups: [], // the server's KV pools are its own
      queueDepth: waiting.length,
      waiting,
      numRunning: this.turns.filter((s) => s.active!.shown && !s.active!.end).length,
      mode: this.mode,
      ...(server ? { server } : {}),
    };
  }

  private statsOf(session: Session, turn: Turn): SessionStats {
    const before = session.stats;
    return {
      ...before,
      tokensIn: turn.numPromptTokens,
      tokensOut: turn.numTokensOut,
      cachedTokens: turn.numCachedTokens,
    };
  }

  /** Turns reported as finished leave: their totals here, history and waiters in the session's record. */
  private endTurns(finished: readonly FinishedEvent[]): void {
    for (const done of finished) {
      const index = this.turns.findIndex((s) => s.sessionId === done.sessionId);
      if (index < 0) continue;
      const session = this.turns[index]!;
      const turn = session.active!;
      this.turns.splice(index, 1);
      session.stats = {
        ...session.stats,
        totalTokensIn: session.stats.totalTokensIn + turn.numPromptTokens,
        totalTokensOut: session.stats.totalTokensOut + turn.numTokensOut,
      };
      // the server streams text, not ids
      session.end(turn, { reason: done.reason, error: done.error, promptTokenIds: [], outputTokenIds: [] });
    }
  }
}
