// SessionRegistry: chat sessions, their history and settings, and per-session stats; turns a
// send() into a scheduler request. It holds no KV: later turns reuse history via the prefix cache.
import type { FinishedEvent, FinishReason, SessionSnapshot, SessionState, SessionStats } from './events';
import type { Request } from './request';
import type { Scheduler, StepOutput } from './scheduler';
import { MAX_NEW_TOKENS, sessionSampling, validateSessionOptions, type SessionOptions } from './session-options';
import type { ChatMessage, ChatTemplate, SamplingParams, Tokenizer } from './types';

export interface TurnResult {
  sessionId: string;
  requestId: string;
  promptTokenIds: number[];
  outputTokenIds: number[];
  text: string;
  finishReason: FinishReason;
  error?: string;
}

interface ActiveTurn {
  request: Request;
  sentAtMs: number;
  firstTokenAtMs?: number;
  text: string;
  /** reset() during the turn: its result must not enter the history. */
  discard: boolean;
}

interface Session {
  sessionId: string;
  systemPrompt?: string;
  sampling: SamplingParams;
  maxTokens: number;
  stopStrings: string[];
  ignoreEos: boolean;
  /** Conversation after the system prompt, rendered by the chat template for text turns. */
  messages: ChatMessage[];
  /** Prompt and output tokens of the last finished turn, continued by token turns. */
  historyTokenIds: number[];
  numTurns: number;
  state: SessionState;
  stats: SessionStats;
  active?: ActiveTurn;
  lastResult?: TurnResult;
  waiters: Array<(result: TurnResult) => void>;
  closed: boolean;
}

export class SessionRegistry {
  private readonly scheduler: Scheduler;
  private readonly tokenizer: Tokenizer;
  private readonly template: ChatTemplate;
  private readonly now: () => number;
  private readonly sessions = new Map<string, Session>();
  private readonly byRequestId = new Map<string, Session>();
  private nextSessionNumber = 1;

  constructor(scheduler: Scheduler, tokenizer: Tokenizer, template: ChatTemplate, now: () => number) {
    this.scheduler = scheduler;
    this.tokenizer = tokenizer;
    this.template = template;
    this.now = now;
  }

  /** Throws InvalidOptionError (session-options.ts) for an option out of bounds; no session is made. */
  create(options: SessionOptions = {}): string {
    validateSessionOptions(options);
    const number = this.nextSessionNumber++;
    const sessionId = `s${number}`;
    const sampling = sessionSampling(options, number);
    this.sessions.set(sessionId, {
      sessionId,
      systemPrompt: options.systemPrompt,
      sampling,
      // absent: no cap of its own, so EOS, a stop string or the context ends the turn (OpenAI's max_tokens)
      maxTokens: options.maxNewTokens ?? MAX_NEW_TOKENS,
      stopStrings: options.stopStrings ?? [],
      ignoreEos: options.ignoreEos ?? false,
      messages: (options.history ?? []).map(({ role, content }) => ({ role, content })),
      historyTokenIds: [],
      numTurns: 0,
      state: 'idle',
      stats: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, totalTokensIn: 0, totalTokensOut: 0 },
      waiters: [],
      closed: false,
    });
    return sessionId;
  }

  /**
   * Starts a turn. Text is added as a user message and the whole conversation is rendered by
   * the chat template; token ids continue the raw token history as they are. Returns the request id.
   */
  send(sessionId: string, input: string | ArrayLike<number>): string {
    const session = this.open(sessionId);
    if (session.active) throw new Error(`session ${sessionId} is still generating`);
    let promptTokenIds: number[];
    if (typeof input === 'string') {
      session.messages.push({ role: 'user', content: input });
      const messages = this.conversation(session);
      // encodeChat keeps special-token strings typed by the user as plain text
      promptTokenIds = this.tokenizer.encodeChat
        ? this.tokenizer.encodeChat(this.template, messages, true)
        : this.tokenizer.encode(this.template.render(messages, true));
    } else {
      const ids = Array.from(input);
      session.messages.push({ role: 'user', content: this.tokenizer.decode(ids) });
      promptTokenIds = [...session.historyTokenIds, ...ids];
    }
    session.numTurns++;
    const requestId = `${sessionId}:${session.numTurns}`;
    const request = this.scheduler.addRequest({
      requestId,
      sessionId,
      promptTokenIds,
      sampling: session.sampling,
      maxTokens: session.maxTokens,
      stopStrings: session.stopStrings,
      ignoreEos: session.ignoreEos,
    });
    session.active = { request, sentAtMs: this.now(), text: '', discard: false };
    session.state = 'waiting';
    session.stats = {
      tokensIn: promptTokenIds.length,
      tokensOut: 0,
      cachedTokens: 0,
      totalTokensIn: session.stats.totalTokensIn + promptTokenIds.length,
      totalTokensOut: session.stats.totalTokensOut,
    };
    this.byRequestId.set(requestId, session);
    return requestId;
  }

  /** Stops the current turn; it ends (state 'cancelled') by the next step. */
  cancel(sessionId: string): void {
    const active = this.open(sessionId).active;
    if (active) this.scheduler.cancel(active.request.requestId);
  }

  /** Forgets the history (a running turn is cancelled and not recorded). */
  reset(sessionId: string): void {
    const session = this.open(sessionId);
    if (session.active) {
      session.active.discard = true;
      this.scheduler.cancel(session.active.request.requestId);
    }
    session.messages = [];
    session.historyTokenIds = [];
    if (!session.active) session.state = 'idle';
  }

  /** Removes the session; a running turn is cancelled and its blocks freed by the next step. */
  close(sessionId: string): void {
    const session = this.open(sessionId);
    session.closed = true;
    if (session.active) this.scheduler.cancel(session.active.request.requestId);
    else this.sessions.delete(sessionId);
  }

  has(sessionId: string): boolean {
    const session = this.sessions.get(sessionId);
    return session !== undefined && !session.closed;
  }

  get(sessionId: string): SessionSnapshot {
    return snapshot(this.open(sessionId));
  }

  list(): SessionSnapshot[] {
    return [...this.sessions.values()].filter((s) => !s.closed).map(snapshot);
  }

  /** Conversation so far (system prompt first), as the chat template sees it. */
  messages(sessionId: string): ChatMessage[] {
    return this.conversation(this.open(sessionId));
  }

  /** Resolves when the current turn ends (at once with the last result when idle). */
  waitForTurn(sessionId: string): Promise<TurnResult> {
    const session = this.open(sessionId);
    if (!session.active) {
      if (session.lastResult) return Promise.resolve(session.lastResult);
      return Promise.reject(new Error(`session ${sessionId} has no turn`));
    }
    return new Promise((resolve) => session.waiters.push(resolve));
  }

  /** Folds one step's output into the sessions' text, history, state and stats. */
  applyStep(output: StepOutput): void {
    const nowMs = this.now();
    for (const row of output.rows) {
      const session = this.byRequestId.get(row.requestId);
      const active = session?.active;
      if (!session || !active || row.newTokenIds.length === 0) continue;
      active.firstTokenAtMs ??= nowMs;
      active.text += row.newText;
      session.stats.tokensOut++;
      session.stats.totalTokensOut++;
    }
    this.applyFinished(output.finished);
  }

  /** Ends the turns of finished requests (a step's, or every one when the engine fails them all). */
  applyFinished(finished: readonly FinishedEvent[]): void {
    for (const done of finished) {
      const session = this.byRequestId.get(done.requestId);
      if (!session?.active) continue;
      session.active.text += done.newText;
      this.endTurn(session, session.active, done.reason, done.error);
    }
    for (const session of this.sessions.values()) {
      if (session.active) this.refreshActive(session, session.active);
    }
  }

  private refreshActive(session: Session, active: ActiveTurn): void {
    const request = active.request;
    if (request.status === 'waiting') session.state = 'waiting';
    else if (request.status === 'running') {
      session.state = request.numComputedTokens < request.numPromptTokens ? 'prefill' : 'decode';
    }
    session.stats.cachedTokens = Math.min(request.numCachedTokens, request.numPromptTokens);
    // Rates are not kept here: src/protocol/metrics.ts derives every one from StepEvents.
    if (active.firstTokenAtMs !== undefined) session.stats.timeToFirstTokenMs = active.firstTokenAtMs - active.sentAtMs;
  }

  private endTurn(session: Session, active: ActiveTurn, reason: FinishReason, error?: string): void {
    this.refreshActive(session, active);
    const request = active.request;
    this.byRequestId.delete(request.requestId);
    session.active = undefined;
    session.state = reason === 'cancelled' ? 'cancelled' : reason === 'error' ? 'error' : 'done';
    session.stats.finishReason = reason;
    session.stats.error = error;
    const result: TurnResult = {
      sessionId: session.sessionId,
      requestId: request.requestId,
      promptTokenIds: request.tokenIds.slice(0, request.numPromptTokens),
      outputTokenIds: request.outputTokenIds,
      text: active.text,
      finishReason: reason,
      ...(error !== undefined ? { error } : {}),
    };
    if (!active.discard) {
      if (reason === 'error') {
        session.messages.pop(); // the turn failed: its user message leaves the history too
      } else {
        session.messages.push({ role: 'assistant', content: active.text });
        session.historyTokenIds = request.tokenIds.slice();
      }
    }
    session.lastResult = result;
    if (session.closed) this.sessions.delete(session.sessionId);
    const waiters = session.waiters;
    session.waiters = [];
    for (const resolve of waiters) resolve(result);
  }

  private conversation(session: Session): ChatMessage[] {
    const system: ChatMessage[] = session.systemPrompt ? [{ role: 'system', content: session.systemPrompt }] : [];
    return [...system, ...session.messages];
  }

  private open(sessionId: string): Session {
    const session = this.sessions.get(sessionId);
    if (!session || session.closed) throw new Error(`no session ${sessionId}`);
    return session;
  }
}

function snapshot(session: Session): SessionSnapshot {
  return { sessionId: session.sessionId, state: session.state, numTurns: session.numTurns, stats: { ...session.stats } };
}
