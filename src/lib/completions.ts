// One chat-completions request over EngineApi: a session per choice, its tokens read from the step
// stream, usage and timings at the end, typed errors. Pure: no worker, no comlink, no DOM.
import type { EngineApi, SessionId } from '../protocol/api';
import type { FinishedEvent, FinishReason as EngineFinishReason, SessionStats, StepEvent } from '../protocol/events';
import { decodeThroughput, meanCohortSize, prefillThroughput, speculationFigures, timeToFirstTokenMs } from '../protocol/metrics';
import { Channel } from './channel';
import { MODEL_CHANGED, MODEL_CHANGED_ERROR_NAME } from '../protocol/load-errors';
import { TAB_EXPIRED_ERROR_NAME } from '../protocol/tab-errors';
import { AbortError, CohortError, ContextLengthError, EngineError, GpuLostError, InvalidRequestError, ModelChangedError, ModelNotLoadedError, TabExpiredError } from './errors';
import type { RequestPlan } from './request';
import type { TokenLogprob, TokenLogprobAlternative } from '../protocol/events';
import { ToolCallParser } from './tool-calls';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessage, ChatCompletionMessageToolCall, ChatCompletionStream, ChatCompletionTokenLogprob, CompletionUsage, FinishReason, LoadedModel, TopLogprob } from './types';

/** The EngineApi verbs the library uses, with plain callbacks (a comlink wrapper proxies them). */
export type EngineLink = Pick<
  EngineApi,
  'loadModel' | 'currentModel' | 'unloadModel' | 'createSession' | 'send' | 'cancel' | 'closeSession' | 'getSession' | 'subscribe' | 'subscribeNotices' | 'unsubscribe' | 'ping' | 'setStepBudget'
>;

/** What a request needs from the engine object that runs it. */
export interface RunContext {
  api: EngineLink;
  model: LoadedModel;
  /**
   * Calls onStep for each step that involves any of `sessionIds` (rows, waiting or finished), and
   * onEnded when the engine object ends every request (terminated, or its tab dropped); returns unwatch.
   */
  watch(sessionIds: ReadonlySet<SessionId>, onStep: (event: StepEvent) => void, onEnded: (error: CohortError) => void): () => void;
  /** GPU-loss notices received so far. */
  gpuLosses(): number;
}

type RunEvent = { kind: 'delta'; index: number; text: string; first: boolean; logprobs?: ChatCompletionTokenLogprob[]; calls?: ChatCompletionMessageToolCall[]; firstCall?: number } | { kind: 'finish'; index: number; reason: FinishReason } | { kind: 'usage'; usage: CompletionUsage };

/** Runs the request; resolves once its first choice shows a token, so errors before that reject create(). */
export async function runCompletion(ctx: RunContext, plan: RequestPlan, signal?: AbortSignal): Promise<ChatCompletionStream | ChatCompletion> {
  const run = new RequestRun(ctx, plan, signal);
  await run.start();
  return plan.stream ? run.stream() : run.collect();
}

class RequestRun {
  readonly id = `chatcmpl-${randomId()}`;
  readonly created = Math.floor(Date.now() / 1000);
  readonly controller = new AbortController();
  private readonly sessionIds: SessionId[] = [];
  private readonly watched = new Set<SessionId>();
  private readonly steps: StepEvent[] = [];
  private readonly started: boolean[];
  private readonly ended: boolean[];
  /** Per choice, when the request has tools: what of its text is a call. */
  private readonly parsers: Array<ToolCallParser | undefined>;
  private readonly events = new Channel<RunEvent>(() => this.abort(new AbortError()));
  private readonly startLosses: number;
  private unwatch: () => void = () => {};
  private othersSent = false;
  private settled = false;
  private firstShown!: { resolve: () => void; reject: (err: unknown) => void };

  constructor(
    private readonly ctx: RunContext,
    private readonly plan: RequestPlan,
    signal?: AbortSignal,
  ) {
    this.started = plan.sessions.map(() => false);
    this.ended = plan.sessions.map(() => false);
    const callable = new Set(plan.callable);
    this.parsers = plan.sessions.map(() => (callable.size > 0 ? new ToolCallParser(callable, { maxCalls: plan.maxCalls }) : undefined));
    this.startLosses = ctx.gpuLosses();
    const onAbort = () => this.abort(new AbortError());
    signal?.addEventListener('abort', onAbort, { once: true });
    this.controller.signal.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) this.settled = true;
  }

  async start(): Promise<void> {
    if (this.settled) throw new AbortError();
    const shown = new Promise<void>((resolve, reject) => (this.firstShown = { resolve, reject }));
    shown.catch(() => undefined); // an early failure is thrown below, not left unhandled
    this.unwatch = this.ctx.watch(
      this.watched,
      (event) => this.onStep(event),
      (error) => this.abort(error),
    );
    try {
      for (const options of this.plan.sessions) {
        const id = await this.ctx.api.createSession(options);
        if (this.settled) {
          void this.ctx.api.closeSession(id).catch(() => undefined); // aborted while it was made
          throw new AbortError();
        }
        this.sessionIds.push(id);
        this.watched.add(id);
      }
      // Siblings follow once the first choice has its prompt's KV, so they find it in the prefix cache.
      await this.ctx.api.send(this.sessionIds[0]!, this.plan.turn);
    } catch (err) {
      let typed = fromEngineError(err);
      // a tool's call schema travels as the request's constraint: a refusal of it is about tools
      if (typed instanceof InvalidRequestError && typed.param === 'response_format' && this.plan.constraintParam === 'tools') typed = new InvalidRequestError(typed.message.replace(/^response_format\b/, 'tools'), 'tools');
      this.abort(typed);
      throw typed;
    }
    await shown;
  }

  stream(): ChatCompletionStream {
    const chunk = (choices: ChatCompletionChunk['choices'], usage?: CompletionUsage): ChatCompletionChunk => ({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.ctx.model.id,
      choices,
      ...(usage ? { usage } : this.plan.includeUsage ? { usage: null } : {}),
    });
    const events = this.events;
    return {
      controller: this.controller,
      async *[Symbol.asyncIterator]() {
        for await (const e of events) {
          if (e.kind === 'delta') {
            const calls = e.calls?.map((call, k) => ({ index: e.firstCall! + k, ...call }));
            // a chunk that only calls says content null, as OpenAI's do
            const content = calls && e.text === '' ? null : e.text;
            yield chunk([{ index: e.index, delta: { ...(e.first ? { role: 'assistant' as const } : {}), content, ...(calls ? { tool_calls: calls } : {}) }, finish_reason: null, logprobs: e.logprobs ? { content: e.logprobs, refusal: null } : null }]);
          } else if (e.kind === 'finish') yield chunk([{ index: e.index, delta: {}, finish_reason: e.reason, logprobs: null }]);
          else yield chunk([], e.usage);
        }
      },
    };
  }

  async collect(): Promise<ChatCompletion> {
    const texts = this.plan.sessions.map(() => '');
    const calls: ChatCompletionMessageToolCall[][] = this.plan.sessions.map(() => []);
    const reasons: FinishReason[] = this.plan.sessions.map(() => 'stop');
    const logprobs: ChatCompletionTokenLogprob[][] = this.plan.sessions.map(() => []);
    let usage: CompletionUsage | undefined;
    for await (const e of this.events) {
      if (e.kind === 'delta') {
        texts[e.index] += e.text;
        if (e.logprobs) logprobs[e.index]!.push(...e.logprobs);
        if (e.calls) calls[e.index]!.push(...e.calls);
      } else if (e.kind === 'finish') reasons[e.index] = e.reason;
      else usage = e.usage;
    }
    const message = (content: string, index: number): ChatCompletionMessage => {
      const made = calls[index]!;
      if (made.length === 0) return { role: 'assistant', content, refusal: null };
      return { role: 'assistant', content: content.trim() === '' ? null : content, refusal: null, tool_calls: made };
    };
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.ctx.model.id,
      choices: texts.map((content, index) => ({ index, message: message(content, index), finish_reason: reasons[index]!, logprobs: this.plan.logprobs ? { content: logprobs[index]!, refusal: null } : null })),
      usage: usage!,
    };
  }

  private onStep(event: StepEvent): void {
    if (this.settled) return;
    this.steps.push(event);
    for (const row of event.rows) {
      const index = this.sessionIds.indexOf(row.sessionId);
      if (index < 0 || row.newTokenIds.length === 0) continue;
      if (index === 0) this.onFirstShown();
      // a token with logprobs is reported in the step that made it, even before its text shows
      const logprobs = this.plan.logprobs && row.newLogprobs && row.newLogprobs.length > 0 ? row.newLogprobs.map(tokenLogprob) : undefined;
      if (row.newText || logprobs) this.delta(index, row.newText, logprobs);
    }
    for (const done of event.finished) {
      const index = this.sessionIds.indexOf(done.sessionId);
      if (index >= 0 && !this.ended[index]) void this.onFinished(index, done);
    }
  }

  /** The choice's new text, less what its parser holds back or reads as calls (`ending`: the reply is complete). */
  private delta(index: number, rawText: string, logprobs?: ChatCompletionTokenLogprob[], ending = false): void {
    const parser = this.parsers[index];
    let text = rawText;
    let calls: ChatCompletionMessageToolCall[] | undefined;
    const firstCall = parser?.numCalls ?? 0;
    if (parser) {
      const events = [...parser.push(rawText), ...(ending ? parser.end() : [])];
      text = events.map((e) => (e.kind === 'text' ? e.text : '')).join('');
      const made = events.flatMap((e) => (e.kind === 'call' ? [e.call] : []));
      if (made.length > 0) calls = made;
      if (!text && !calls && !logprobs) return;
    }
    this.events.push({ kind: 'delta', index, text, first: !this.started[index], ...(logprobs ? { logprobs } : {}), ...(calls ? { calls, firstCall } : {}) });
    this.started[index] = true;
  }

  private onFirstShown(): void {
    this.firstShown.resolve();
    if (this.othersSent) return;
    this.othersSent = true;
    for (const id of this.sessionIds.slice(1)) {
      this.ctx.api.send(id, this.plan.turn).catch((err: unknown) => this.abort(fromEngineError(err)));
    }
  }

  private async onFinished(index: number, done: FinishedEvent): Promise<void> {
    this.ended[index] = true;
    if (done.reason === 'error' || done.reason === 'cancelled') {
      this.abort(await this.turnError(index, done));
      return;
    }
    if (done.newText || this.parsers[index]) this.delta(index, done.newText, undefined, true);
    const reason = finishReason(done.reason);
    // a reply cut by the token limit stays 'length', as OpenAI's does
    this.events.push({ kind: 'finish', index, reason: reason === 'stop' && (this.parsers[index]?.numCalls ?? 0) > 0 ? 'tool_calls' : reason });
    if (index === 0) this.onFirstShown();
    if (this.ended.every(Boolean)) await this.finish();
  }

  private async finish(): Promise<void> {
    try {
      const stats = await Promise.all(this.sessionIds.map((id) => this.ctx.api.getSession(id).then((s) => s.stats)));
      if (this.settled) return;
      this.events.push({ kind: 'usage', usage: usageOf(stats, this.steps, new Set(this.sessionIds)) });
      this.settle();
      this.events.close();
    } catch (err) {
      this.abort(fromEngineError(err));
    }
  }

  /** Why a choice's turn ended badly, as the typed error create() or the stream throws. */
  private async turnError(index: number, done: FinishedEvent): Promise<CohortError> {
    if (this.settled) return new AbortError();
    if (done.code === MODEL_CHANGED) return new ModelChangedError(done.error);
    const stats = await this.ctx.api
      .getSession(this.sessionIds[index]!)
      .then((s) => s.stats)
      .catch(() => undefined);
    const limit = this.ctx.model.contextTokens;
    if (done.reason === 'error' && stats && stats.tokensOut === 0 && stats.tokensIn >= limit) return new ContextLengthError(stats.tokensIn, limit);
    // a notice posted before the turn's end has arrived once a round trip after it returns
    await this.ctx.api.ping().catch(() => undefined);
    if (this.ctx.gpuLosses() > this.startLosses) return new GpuLostError(`the GPU device was lost during the request; send it again (${done.error ?? done.reason})`);
    if (done.reason === 'cancelled') {
      const model = await this.ctx.api.currentModel().catch(() => null);
      return model ? new AbortError('The request was cancelled by the engine.') : new ModelNotLoadedError('The model was unloaded during the request.');
    }
    return new EngineError(done.error ?? 'the engine ended the request with an error');
  }

  /** Ends the request early: its sessions are closed (turns cancelled, blocks freed by the next step). */
  abort(error: unknown): void {
    if (this.settled) return;
    this.settle();
    this.firstShown?.reject(error);
    this.events.fail(error);
  }

  private settle(): void {
    this.settled = true;
    this.unwatch();
    // the sessions served one request; the engine keeps their KV in the prefix cache, not them
    for (const id of this.sessionIds) void this.ctx.api.closeSession(id).catch(() => undefined);
  }
}

const utf8 = new TextEncoder();

/** An alternative in OpenAI's shape: its text, logprob and the text's UTF-8 bytes. */
function topLogprob(t: TokenLogprobAlternative): TopLogprob {
  return { token: t.token, logprob: t.logprob, bytes: Array.from(utf8.encode(t.token)) };
}

/** A generated token's logprobs in OpenAI's shape. */
function tokenLogprob(t: TokenLogprob): ChatCompletionTokenLogprob {
  return { ...topLogprob(t), top_logprobs: t.top.map(topLogprob) };
}

function finishReason(reason: EngineFinishReason): FinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

/** Usage for the whole request; every timing comes from src/protocol/metrics.ts over its sessions' steps. */
export function usageOf(stats: readonly SessionStats[], steps: readonly StepEvent[], sessionIds: ReadonlySet<SessionId>): CompletionUsage {
  const first = stats[0]!;
  const completionTokens = stats.reduce((n, s) => n + s.tokensOut, 0);
  // per choice: prediction tokens its reply contains in order (accepted), the rest rejected
  const accepted = stats.reduce((n, s) => n + (s.acceptedPredictionTokens ?? 0), 0);
  const rejected = stats.reduce((n, s) => n + (s.predictionTokens ?? 0) - (s.acceptedPredictionTokens ?? 0), 0);
  const speculation = speculationFigures(steps, sessionIds);
  const ttfts = [...sessionIds].map((id) => timeToFirstTokenMs(steps, id)).filter((t): t is number => t !== undefined);
  return {
    prompt_tokens: first.tokensIn,
    completion_tokens: completionTokens,
    total_tokens: first.tokensIn + completionTokens,
    prompt_tokens_details: { cached_tokens: first.cachedTokens },
    completion_tokens_details: { accepted_prediction_tokens: accepted, rejected_prediction_tokens: rejected },
    timings: {
      prefill_tokens_per_second: prefillThroughput(steps, sessionIds).tokensPerSec,
      decode_tokens_per_second: decodeThroughput(steps, sessionIds).tokensPerSec,
      time_to_first_token_ms: ttfts.length > 0 ? Math.min(...ttfts) : null,
      mean_cohort_size: meanCohortSize(steps, sessionIds),
      steps: steps.filter((s) => s.rows.some((r) => sessionIds.has(r.sessionId))).length,
      tokens_per_row_step: speculation.tokensPerRowStep,
      drafted_tokens: speculation.numDrafted,
      accepted_draft_tokens: speculation.numAccepted,
      draft_acceptance_rate: speculation.acceptanceRate,
    },
  };
}

/** Engine option names (src/engine/session-options.ts) as the request's fields. */
const PARAM_OF_OPTION: Record<string, string> = {
  maxNewTokens: 'max_completion_tokens',
  'sampling.temperature': 'temperature',
  'sampling.topP': 'top_p',
  'sampling.topK': 'top_k',
  'sampling.seed': 'seed',
  'sampling.frequencyPenalty': 'frequency_penalty',
  'sampling.presencePenalty': 'presence_penalty',
  'sampling.repetitionPenalty': 'repetition_penalty',
  'sampling.logitBias': 'logit_bias',
  'sampling.logprobs': 'top_logprobs',
  'sampling.constraint': 'response_format',
  seed: 'seed',
  stopStrings: 'stop',
  systemPrompt: 'messages',
  ignoreEos: 'ignore_eos',
  predictionText: 'prediction.content',
  'speculation.maxDraftTokens': 'speculation.max_draft_tokens',
};

/**
 * An error the engine threw for a call, typed: InvalidOptionError becomes a 400 naming the field
 * (comlink carries its name and message, not `.option`, so the option is read from the message).
 */
export function fromEngineError(err: unknown): CohortError {
  if (err instanceof CohortError) return err;
  const e = err instanceof Error ? err : new Error(String(err));
  if (e.name === 'InvalidOptionError') {
    const option = (e as Error & { option?: string }).option ?? e.message.split(' ')[0] ?? '';
    const param = PARAM_OF_OPTION[option] ?? (option.startsWith('history') ? 'messages' : option);
    const message = PARAM_OF_OPTION[option] ? e.message.replace(option, param) : e.message;
    return new InvalidRequestError(message, param);
  }
  if (e.name === MODEL_CHANGED_ERROR_NAME) return new ModelChangedError(e.message);
  if (e.name === TAB_EXPIRED_ERROR_NAME) return new TabExpiredError(e.message);
  if (/no model is loaded/.test(e.message)) return new ModelNotLoadedError();
  return new EngineError(e.message);
}

function randomId(): string {
  return globalThis.crypto?.randomUUID?.().replace(/-/g, '').slice(0, 24) ?? Math.random().toString(36).slice(2);
}
