// SessionRegistry: the engine's chat sessions on the scheduler: a send() becomes a request, each
// step's output the sessions' text, state and stats. It holds no KV: later turns reuse history via
// the prefix cache. The record itself (history, waiters, close, reset) is session-book.ts.
import type { FinishedEvent, SessionSnapshot } from './events';
import type { Request } from './request';
import type { Scheduler, StepOutput } from './scheduler';
import { predictionUse } from './prediction';
import { SessionBook, type SessionRecord, type TurnRecord, type TurnResult } from './session-book';
import { MAX_NEW_TOKENS, type SessionOptions } from './session-options';
import { checkTurnMessages, type TurnMessages } from './chat-messages';
import type { ChatMessage, ChatTemplate, Tokenizer, ToolDefinition } from './types';

// what waitForTurn() resolves with; its callers import it from here
export type { TurnResult };

/** A turn on the scheduler: its request carries the tokens. */
interface ScheduledTurn extends TurnRecord {
  request: Request;
}

type Session = SessionRecord<ScheduledTurn>;

export class SessionRegistry {
  private readonly scheduler: Scheduler;
  private readonly tokenizer: Tokenizer;
  private readonly template: ChatTemplate;
  private readonly book: SessionBook<ScheduledTurn>;
  private readonly byRequestId = new Map<string, Session>();

  /** Sessions are `s<n>`, n counted from `firstSessionNumber`. */
  constructor(scheduler: Scheduler, tokenizer: Tokenizer, template: ChatTemplate, firstSessionNumber = 1) {
    this.book = new SessionBook<ScheduledTurn>('s', firstSessionNumber);
    this.scheduler = scheduler;
    this.tokenizer = tokenizer;
    this.template = template;
  }

  /** Throws InvalidOptionError (session-options.ts) for an option out of bounds; no session is made. */
  create(options: SessionOptions = {}): string {
    return this.book.create(options).sessionId;
  }

  /**
   * Starts a turn. Text is added as a user message (messages as they are: tool results) and the
   * whole conversation is rendered by the chat template with the session's tools; token ids
   * continue the raw token history as they are. Returns the request id.
   */
  send(sessionId: string, input: string | ArrayLike<number> | TurnMessages): string {
    const session = this.book.open(sessionId);
    const turnMessages = isTurnMessages(input) ? input : null;
    if (turnMessages) checkTurnMessages(turnMessages);
    const ids = typeof input === 'string' || turnMessages ? null : Array.from(input as ArrayLike<number>);
    const added = turnMessages ? turnMessages.messages : ids ? this.tokenizer.decode(ids) : (input as string);
    const turn = session.begin(added, (turnNumber) => {
      const promptTokenIds = ids ? [...session.historyTokenIds, ...ids] : this.render(session.conversation(), session.settings.tools);
      const { settings } = session;
      const request = this.scheduler.addRequest({
        requestId: `${sessionId}:${turnNumber}`,
        sessionId,
        promptTokenIds,
        sampling: settings.sampling,
        maxTokens: settings.maxNewTokens ?? MAX_NEW_TOKENS,
        stopStrings: settings.stopStrings,
        ignoreEos: settings.ignoreEos,
        speculation: settings.speculation,
        predictionTokenIds: this.predictionOf(session),
      });
      return { requestId: request.requestId, request, text: '' };
    });
    session.stats.tokensIn = turn.request.numPromptTokens;
    if (turn.request.predictionTokenIds) session.stats.predictionTokens = turn.request.predictionTokenIds.length;
    session.stats.totalTokensIn += turn.request.numPromptTokens;
    this.byRequestId.set(turn.requestId, session);
    return turn.requestId;
  }

  /** Stops the current turn; it ends (state 'cancelled') by the next step. */
  cancel(sessionId: string): void {
    const active = this.book.open(sessionId).active;
    if (active) this.scheduler.cancel(active.requestId);
  }

  /** Forgets the history (a running turn is cancelled and not recorded). */
  reset(sessionId: string): void {
    const running = this.book.open(sessionId).reset();
    if (running) this.scheduler.cancel(running.requestId);
  }

  /** Removes the session; a running turn is cancelled and its blocks freed by the next step. */
  close(sessionId: string): void {
    const running = this.book.open(sessionId).close();
    if (running) this.scheduler.cancel(running.requestId);
  }

  has(sessionId: string): boolean {
    return this.book.has(sessionId);
  }

  get(sessionId: string): SessionSnapshot {
    return this.book.open(sessionId).snapshot();
  }

  list(): SessionSnapshot[] {
    return this.book.live().map((s) => s.snapshot());
  }

  /** Conversation so far (system prompt first), as the chat template sees it. */
  messages(sessionId: string): ChatMessage[] {
    return this.book.open(sessionId).conversation();
  }

  /** Resolves when the current turn ends (at once with the last result when idle). */
  waitForTurn(sessionId: string): Promise<TurnResult> {
    return this.book.open(sessionId).waitForTurn();
  }

  /** Folds one step's output into the sessions' text, history, state and stats. */
  applyStep(output: StepOutput): void {
    for (const row of output.rows) {
      const session = this.byRequestId.get(row.requestId);
      const active = session?.active;
      if (!session || !active || row.newTokenIds.length === 0) continue;
      active.text += row.newText;
      // a verify row adds its accepted drafts and one more
      session.stats.tokensOut += row.newTokenIds.length;
      session.stats.totalTokensOut += row.newTokenIds.length;
    }
    this.applyFinished(output.finished);
  }

  /** Ends the turns of finished requests (a step's, or every one when the engine fails them all). */
  applyFinished(finished: readonly FinishedEvent[]): void {
    for (const done of finished) {
      const session = this.byRequestId.get(done.requestId);
      const active = session?.active;
      if (!session || !active) continue;
      active.text += done.newText;
      this.refreshActive(session, active);
      this.byRequestId.delete(done.requestId);
      const request = active.request;
      if (request.predictionTokenIds) {
        const use = predictionUse(request.predictionTokenIds, request.outputTokenIds);
        session.stats.predictionTokens = use.numPredicted;
        session.stats.acceptedPredictionTokens = use.numAccepted;
      }
      session.end(active, {
        reason: done.reason,
        error: done.error,
        promptTokenIds: request.tokenIds.slice(0, request.numPromptTokens),
        outputTokenIds: request.outputTokenIds,
        historyTokenIds: request.tokenIds.slice(),
      });
    }
    for (const session of this.book.all()) {
      if (session.active) this.refreshActive(session, session.active);
    }
  }

  private refreshActive(session: Session, active: ScheduledTurn): void {
    const request = active.request;
    if (request.status === 'waiting') session.state = 'waiting';
    else if (request.status === 'running') {
      session.state = request.numComputedTokens < request.numPromptTokens ? 'prefill' : 'decode';
    }
    session.stats.cachedTokens = Math.min(request.numCachedTokens, request.numPromptTokens);
    // Neither rates nor TTFT are kept here: src/protocol/metrics.ts derives every one from StepEvents.
  }

  /** The session's prediction as tokens: a text prediction is encoded once, at the first send that needs it. */
  private predictionOf(session: Session): number[] | undefined {
    const { settings } = session;
    if (settings.predictionTokenIds === undefined && settings.predictionText !== undefined) {
      settings.predictionTokenIds = this.tokenizer.encode(settings.predictionText);
    }
    return settings.predictionTokenIds;
  }

  /** encodeChat keeps special-token strings typed by the user as plain text. */
  private render(messages: ChatMessage[], tools: ToolDefinition[] | undefined): number[] {
    return this.tokenizer.encodeChat ? this.tokenizer.encodeChat(this.template, messages, true, tools) : this.tokenizer.encode(this.template.render(messages, true, tools));
  }
}

function isTurnMessages(input: unknown): input is TurnMessages {
  return typeof input === 'object' && input !== null && !ArrayBuffer.isView(input) && !Array.isArray(input) && 'messages' in input;
}
