// SessionBook and SessionRecord: what every executor keeps of a chat session alike (settings, history,
// state, stats, the turn in progress, its end, the last result and who waits for it). No scheduling,
// tokenizing or I/O: engine/sessions.ts runs turns on the scheduler, remote/server-host.ts on a server.
import type { FinishReason, SessionSnapshot, SessionState, SessionStats } from './events';
import { sessionSampling, validateSessionOptions, type SessionOptions } from './session-options';
import { DEFAULT_SPECULATION, validateSpeculation, type Speculation } from './speculation';
import { copyConversationMessage, type ConversationMessage } from './chat-messages';
import type { ChatMessage, SamplingParams, ToolDefinition } from './types';

export interface TurnResult {
  sessionId: string;
  requestId: string;
  promptTokenIds: number[];
  outputTokenIds: number[];
  text: string;
  finishReason: FinishReason;
  error?: string;
}

/** A session's options once checked and defaulted; fixed for the session's life. */
export interface SessionSettings {
  systemPrompt?: string;
  sampling: SamplingParams;
  /** Absent: no cap of its own, so EOS, a stop string or the context ends a turn (OpenAI's max_tokens). */
  maxNewTokens?: number;
  stopStrings: string[];
  ignoreEos: boolean;
  speculation: Speculation;
  /** Tokens each turn's output is expected to be (drafts come from them first); absent: none. */
  predictionTokenIds?: number[];
  /** The same as text, until the executor encodes it (sessions.ts, at the first send). */
  predictionText?: string;
  /** Functions the model may call, rendered into every turn's prompt; absent: none. */
  tools?: ToolDefinition[];
}

/** What every turn carries; an executor extends it with its handle (a scheduler request, a fetch's controller). */
export interface TurnRecord {
  readonly requestId: string;
  /** The reply so far; the history's assistant message when the turn ends. */
  text: string;
}

/** How a turn ended, as the executor saw it. */
export interface TurnOutcome {
  reason: FinishReason;
  error?: string;
  /** [] where the executor sees only text (a server's stream). */
  promptTokenIds: number[];
  outputTokenIds: number[];
  /** Prompt and reply as one sequence, for the next token-id turn to continue; absent: left as it was. */
  historyTokenIds?: number[];
}

export class SessionRecord<Turn extends TurnRecord = TurnRecord> {
  /** Conversation after the system prompt. */
  messages: ChatMessage[];
  /** Prompt and output tokens of the last finished turn, continued by token turns. */
  historyTokenIds: number[] = [];
  /** Turns begun, ended or not (a turn's number is its count at begin()). */
  numTurns = 0;
  state: SessionState = 'idle';
  /** The executor fills the current turn's counts; begin() and end() keep the rest. */
  stats: SessionStats = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, totalTokensIn: 0, totalTokensOut: 0 };
  lastResult?: TurnResult;
  private turn: Turn | undefined;
  /** reset() during the turn: its result must not enter the history. */
  private discardTurn = false;
  private waiters: Array<(result: TurnResult) => void> = [];
  /** Messages the turn in progress added to the history (a failed turn takes them out). */
  private turnMessages = 0;
  private isClosed = false;

  constructor(
    readonly sessionId: string,
    readonly settings: SessionSettings,
    history: ChatMessage[],
    /** Takes the record out of its book: called once it is closed and no turn runs. */
    private readonly retire: () => void,
  ) {
    this.messages = history;
  }

  /** The turn in progress, if any. */
  get active(): Turn | undefined {
    return this.turn;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Conversation so far (system prompt first), as a chat template or a server sees it. */
  conversation(): ChatMessage[] {
    const system: ChatMessage[] = this.settings.systemPrompt ? [{ role: 'system', content: this.settings.systemPrompt }] : [];
    return [...system, ...this.messages];
  }

  /**
   * Starts a turn: the user message (or the turn's messages: tool results, a user message) joins
   * the history, then `makeTurn(turnNumber)` starts the work (it may read conversation()). If
   * makeTurn throws, the history and turn count are as before.
   */
  begin(input: string | readonly ConversationMessage[], makeTurn: (turnNumber: number) => Turn): Turn {
    if (this.turn) throw new Error(`session ${this.sessionId} is still generating`);
    const added: ChatMessage[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input.map(copyConversationMessage);
    this.messages.push(...added);
    let turn: Turn;
    try {
      turn = makeTurn(this.numTurns + 1);
    } catch (err) {
      this.messages.splice(this.messages.length - added.length);
      throw err;
    }
    this.turnMessages = added.length;
    this.numTurns++;
    this.turn = turn;
    this.discardTurn = false;
    this.state = 'waiting';
    this.stats = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, totalTokensIn: this.stats.totalTokensIn, totalTokensOut: this.stats.totalTokensOut };
    return turn;
  }

  /**
   * Ends `turn` once: the reply joins the history (a failed turn takes its user message out instead;
   * a turn reset() discarded leaves the history alone), waiters get the result, a closed session
   * leaves its book. Returns undefined, changing nothing, when `turn` is not the one in progress.
   */
  end(turn: Turn, outcome: TurnOutcome): TurnResult | undefined {
    if (turn !== this.turn) return undefined;
    this.turn = undefined;
    const { reason, error } = outcome;
    this.state = reason === 'cancelled' ? 'cancelled' : reason === 'error' ? 'error' : 'done';
    this.stats.finishReason = reason;
    if (error !== undefined) this.stats.error = error;
    if (!this.discardTurn) {
      if (reason === 'error') {
        this.messages.splice(this.messages.length - this.turnMessages); // the turn failed: its messages leave the history too
      } else {
        this.messages.push({ role: 'assistant', content: turn.text });
        if (outcome.historyTokenIds) this.historyTokenIds = outcome.historyTokenIds;
      }
    }
    const result: TurnResult = {
      sessionId: this.sessionId,
      requestId: turn.requestId,
      promptTokenIds: outcome.promptTokenIds,
      outputTokenIds: outcome.outputTokenIds,
      text: turn.text,
      finishReason: reason,
      ...(error !== undefined ? { error } : {}),
    };
    this.lastResult = result;
    if (this.isClosed) this.retire();
    for (const resolve of this.waiters.splice(0)) resolve(result);
    return result;
  }

  /** Resolves when the current turn ends (at once with the last result when idle). */
  waitForTurn(): Promise<TurnResult> {
    if (!this.turn) {
      if (this.lastResult) return Promise.resolve(this.lastResult);
      return Promise.reject(new Error(`session ${this.sessionId} has no turn`));
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Forgets the history; a turn in progress is returned for the executor to cancel, and is not recorded. */
  reset(): Turn | undefined {
    if (this.turn) this.discardTurn = true;
    else this.state = 'idle';
    this.messages = [];
    this.historyTokenIds = [];
    return this.turn;
  }

  /**
   * Closes the session: it leaves its book now, or when the turn in progress ends (returned, for the
   * executor to cancel), so that turn's waiters still get their result.
   */
  close(): Turn | undefined {
    this.isClosed = true;
    if (!this.turn) this.retire();
    return this.turn;
  }

  snapshot(): SessionSnapshot {
    return { sessionId: this.sessionId, state: this.state, numTurns: this.numTurns, stats: { ...this.stats } };
  }
}

/** The sessions of one executor by id; ids are `idPrefix` + a number counted from `firstNumber`. */
export class SessionBook<Turn extends TurnRecord = TurnRecord> {
  private readonly records = new Map<string, SessionRecord<Turn>>();
  private nextSessionNumber: number;

  /** A host that replaces its engine starts the next one's numbers after the last's, so no id is reused. */
  constructor(
    private readonly idPrefix: string,
    firstNumber = 1,
  ) {
    this.nextSessionNumber = firstNumber;
  }

  /** Throws InvalidOptionError (session-options.ts) for an option out of bounds; nothing is recorded then. */
  create(options: SessionOptions = {}): SessionRecord<Turn> {
    validateSessionOptions(options);
    const number = this.nextSessionNumber++;
    const sessionId = `${this.idPrefix}${number}`;
    const settings: SessionSettings = {
      systemPrompt: options.systemPrompt,
      sampling: sessionSampling(options, number),
      maxNewTokens: options.maxNewTokens,
      stopStrings: options.stopStrings ?? [],
      ignoreEos: options.ignoreEos ?? false,
      speculation: options.speculation === undefined ? DEFAULT_SPECULATION : validateSpeculation(options.speculation),
      ...(options.predictionTokenIds ? { predictionTokenIds: options.predictionTokenIds.slice() } : {}),
      ...(options.predictionText !== undefined ? { predictionText: options.predictionText } : {}),
      ...(options.tools && options.tools.length > 0 ? { tools: structuredClone(options.tools) } : {}),
    };
    const history: ChatMessage[] = (options.history ?? []).map(copyConversationMessage);
    const record = new SessionRecord<Turn>(sessionId, settings, history, () => this.records.delete(sessionId));
    this.records.set(sessionId, record);
    return record;
  }

  /** The session, unless it is unknown or closed. */
  open(sessionId: string): SessionRecord<Turn> {
    const record = this.records.get(sessionId);
    if (!record || record.closed) throw new Error(`no session ${sessionId}`);
    return record;
  }

  /** The session, closed ones included while their last turn runs. */
  find(sessionId: string): SessionRecord<Turn> | undefined {
    return this.records.get(sessionId);
  }

  has(sessionId: string): boolean {
    const record = this.records.get(sessionId);
    return record !== undefined && !record.closed;
  }

  /** Open sessions, in creation order. */
  live(): SessionRecord<Turn>[] {
    return [...this.records.values()].filter((r) => !r.closed);
  }

  /** Every session still in the book, closed ones whose turn still runs included. */
  all(): SessionRecord<Turn>[] {
    return [...this.records.values()];
  }

  clear(): void {
    this.records.clear();
  }
}
