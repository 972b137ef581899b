// Library test page: the library's createEngine, as any page would use it, exposed on
// window.cohortLib with helpers that run requests and keep every step as plain data. Not the harness.
import * as Comlink from 'comlink';
import type { EngineApi, SessionOptions, TabApi } from '../../src/protocol/api';
import './soak'; // window.cohortSoak, the soak's own helpers on this page
import { createEngine, type BrowserEngine, type ChatCompletionChunk, type ChatCompletionTokenLogprob, type ChatCompletionCreateParamsBase, type CompletionUsage, type CreateEngineOptions, type LoadedModel, type StepBudget, type StepEvent } from '../../src/lib';

/** A StepEvent as plain JSON (token ids as arrays), the fields the specs read. */
export interface PlainStep {
  stepIndex: number;
  /** numDrafted / numAccepted: a verify row's drafts (counted in numTokens) and how many were kept. */
  rows: Array<{ sessionId: string; kind: 'prefill' | 'decode'; numTokens: number; position: number; newTokenIds: number[]; newText: string; numDrafted?: number; numAccepted?: number }>;
  finished: Array<{ sessionId: string; reason: string; newText: string }>;
  numRunning: number;
  queueDepth: number;
  kvBlocksUsed: number;
  kvBlocksShared: number;
}

export interface RequestSpec {
  params: Omit<ChatCompletionCreateParamsBase, 'stream'>;
  /** Streamed (default) or one ChatCompletion. */
  stream?: boolean;
  /** Abort this request's signal once it has this many chunks and a step has `whenRows` rows. */
  abort?: { afterChunks: number; whenRows: number };
}

export interface RequestOutcome {
  texts: string[];
  finishReasons: Array<string | null>;
  usage: CompletionUsage | null;
  numChunks: number;
  error: { name: string; message: string } | null;
  /** Each choice's logprobs.content (streamed: the chunks' in order), for requests with logprobs. */
  logprobs: ChatCompletionTokenLogprob[][];
  /** Each choice's tool calls (streamed: assembled from the chunks' deltas by index). */
  toolCalls: ToolCallOutcome[][];
}

export interface ToolCallOutcome {
  id: string;
  name: string;
  arguments: string;
}

export interface RunOutcome {
  outcomes: RequestOutcome[];
  /** The steps from the first request's start to the last one's end, every session's rows. */
  steps: PlainStep[];
}

export interface LibraryPage {
  start(options?: Omit<CreateEngineOptions, 'model' | 'onProgress'>): Promise<{ workerKind: string; model: LoadedModel }>;
  /** Token positions per KV block of the serving model. */
  blockSize(): number;
  /** The library's engine.setStepBudget. */
  setStepBudget(budget: StepBudget | null): Promise<void>;
  /** Runs the requests at once; resolves when every one has ended (finished, aborted or failed). */
  run(specs: RequestSpec[]): Promise<RunOutcome>;
  /** Aborts every streamed run() request still in flight: a spec, not a request's length, says when it ends. */
  stopRuns(): void;
  /** Every step since start(). */
  steps: PlainStep[];
  terminate(): void;
  /**
   * A session's state as the shared engine worker reports it, asked over a port of this page's
   * own (not the library's): 'gone: ...' once the engine no longer knows the session.
   */
  sharedSessionState(sessionId: string): Promise<string>;
  /**
   * Joins the shared engine worker as a tab of the test's own, not the library's: it never pings
   * by itself, and its heartbeat timeout is what the test last said (`hello`), so a spec decides
   * when its silence may end its sessions instead of racing a timer. Resolves once joined.
   */
  tabJoin(timeoutMs: number): Promise<void>;
  /** On that tab: a new session sent `text`; returns its id at once (its turn runs on). */
  tabSend(options: SessionOptions, text: string): Promise<string>;
  /** On that tab: says hello again with a new heartbeat timeout (its last call before silence, in the specs). */
  tabHello(timeoutMs: number): Promise<void>;
}

declare global {
  interface Window {
    cohortLib: LibraryPage;
  }
}

let engine: BrowserEngine | null = null;
let sharedApi: Comlink.Remote<EngineApi> | null = null;
let testTab: Comlink.Remote<TabApi> | null = null;

/** A new port to the library's shared worker (the same URL and name, so the same worker). */
const sharedWorkerPort = (): MessagePort => new SharedWorker(new URL('../../workers/engine.shared-worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' }).port;
const steps: PlainStep[] = [];
/** Streamed run() requests in flight (stopRuns aborts them). */
const inFlight = new Set<AbortController>();

function plain(event: StepEvent): PlainStep {
  return {
    stepIndex: event.stepIndex,
    rows: event.rows.map((r) => ({ sessionId: r.sessionId, kind: r.kind, numTokens: r.numTokens, position: r.position, newTokenIds: Array.from(r.newTokenIds), newText: r.newText, ...(r.numDrafted ? { numDrafted: r.numDrafted, numAccepted: r.numAccepted ?? 0 } : {}) })),
    finished: event.finished.map((f) => ({ sessionId: f.sessionId, reason: f.reason, newText: f.newText })),
    numRunning: event.numRunning,
    queueDepth: event.queueDepth,
    kvBlocksUsed: event.kvBlocksUsed,
    kvBlocksShared: event.kvBlocksShared,
  };
}

/** One request; `fromStep` is where its run's steps begin in `steps`. */
async function runOne(spec: RequestSpec, fromStep: number): Promise<RequestOutcome> {
  const outcome: RequestOutcome = { texts: [], finishReasons: [], usage: null, numChunks: 0, error: null, logprobs: [], toolCalls: [] };
  const live = engine!;
  let controller: AbortController | null = null;
  try {
    if (spec.stream === false) {
      const completion = await live.chat.completions.create({ ...spec.params, stream: false });
      outcome.texts = completion.choices.map((c) => c.message.content ?? '');
      outcome.finishReasons = completion.choices.map((c) => c.finish_reason);
      outcome.logprobs = completion.choices.map((c) => c.logprobs?.content ?? []);
      outcome.toolCalls = completion.choices.map((c) => (c.message.tool_calls ?? []).map((t) => ({ id: t.id, name: t.function.name, arguments: t.function.arguments })));
      outcome.usage = completion.usage;
      return outcome;
    }
    controller = new AbortController();
    inFlight.add(controller);
    const stream = await live.chat.completions.create({ ...spec.params, stream: true, stream_options: { include_usage: true } }, { signal: controller.signal });
    for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
      outcome.numChunks++;
      for (const choice of chunk.choices) {
        outcome.texts[choice.index] = (outcome.texts[choice.index] ?? '') + (choice.delta.content ?? '');
        outcome.finishReasons[choice.index] = choice.finish_reason ?? outcome.finishReasons[choice.index] ?? null;
        (outcome.logprobs[choice.index] ??= []).push(...(choice.logprobs?.content ?? []));
        for (const delta of choice.delta.tool_calls ?? []) {
          const call = ((outcome.toolCalls[choice.index] ??= [])[delta.index] ??= { id: '', name: '', arguments: '' });
          call.id ||= delta.id ?? '';
          call.name += delta.function?.name ?? '';
          call.arguments += delta.function?.arguments ?? '';
        }
      }
      if (chunk.usage) outcome.usage = chunk.usage;
      const abort = spec.abort;
      if (abort && outcome.numChunks >= abort.afterChunks && steps.slice(fromStep).some((s) => s.rows.length >= abort.whenRows)) controller.abort();
    }
  } catch (err) {
    outcome.error = { name: (err as Error).name, message: (err as Error).message };
  } finally {
    if (controller) inFlight.delete(controller);
  }
  return outcome;
}

window.cohortLib = {
  steps,
  async start(options = {}) {
    engine = await createEngine({ ...options, model: { kind: 'embedded' } });
    engine.onStep((event) => steps.push(plain(event)));
    return { workerKind: engine.workerKind, model: engine.models[0]! };
  },
  blockSize() {
    if (!engine) throw new Error('cohortLib.start() first');
    return engine.models[0]!.blockSize;
  },
  setStepBudget(budget) {
    if (!engine) throw new Error('cohortLib.start() first');
    return engine.setStepBudget(budget);
  },
  async run(specs) {
    const from = steps.length;
    const outcomes = await Promise.all(specs.map((spec) => runOne(spec, from)));
    return { outcomes, steps: steps.slice(from) };
  },
  async sharedSessionState(sessionId) {
    sharedApi ??= Comlink.wrap<EngineApi>(sharedWorkerPort());
    return sharedApi.getSession(sessionId).then(
      (snapshot) => snapshot.state,
      (err: unknown) => `gone: ${(err as Error).message}`,
    );
  },
  stopRuns() {
    for (const controller of inFlight) controller.abort();
    inFlight.clear();
  },
  terminate() {
    engine?.terminate();
    engine = null;
  },
  async tabJoin(timeoutMs) {
    testTab = Comlink.wrap<TabApi>(sharedWorkerPort());
    await testTab.hello(timeoutMs);
  },
  async tabSend(options, text) {
    if (!testTab) throw new Error('cohortLib.tabJoin() first');
    const id = await testTab.createSession(options);
    await testTab.send(id, text);
    return id;
  },
  async tabHello(timeoutMs) {
    if (!testTab) throw new Error('cohortLib.tabJoin() first');
    await testTab.hello(timeoutMs);
  },
};

document.getElementById('status')!.textContent = 'ready';
document.body.dataset.ready = 'true';
