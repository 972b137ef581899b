// The soak's side of testing/library.html: window.cohortSoak, one engine per tab and one request at a
// time per call, each with a deadline, keeping counters and the last step only (no growing logs). Not the driver.
import * as Comlink from 'comlink';
import { createEngine, type BrowserEngine, type ChatCompletion, type ChatCompletionChunk, type ChatCompletionCreateParamsBase } from '../../src/lib';

export interface SoakRequest {
  params: Omit<ChatCompletionCreateParamsBase, 'stream'>;
  stream: boolean;
  /** Streams only: abort the request's signal once it has this many chunks. */
  abortAfterChunks?: number;
  /** Past this the request is reported as 'deadline' and its signal aborted, so no call waits forever. */
  deadlineMs: number;
}

export interface SoakOutcome {
  /** 'ok': finished; 'error': threw (name, message); 'deadline': still open at its deadline. */
  end: 'ok' | 'error' | 'deadline';
  errorName: string | null;
  errorMessage: string | null;
  /** Whether this page aborted it (abortAfterChunks reached), so an AbortError is the expected end. */
  aborted: boolean;
  numChunks: number;
  finishReasons: Array<string | null>;
  completionTokens: number;
  elapsedMs: number;
}

export interface SoakLastStep {
  stepIndex: number;
  kvBlocksUsed: number;
  numRunning: number;
  queueDepth: number;
}

export interface SoakCounters {
  started: number;
  /** Requests that reached an end (finished, threw or hit their deadline): each is counted once. */
  ended: number;
  /** Requests that ended only after their deadline had been reported. */
  endedLate: number;
  /** Ends seen twice: a choice with a second finish_reason, a chunk after one, or content past an error. */
  doubleEnds: number;
  steps: number;
  /** Stream chunks received by every request of this page. */
  chunks: number;
  lastStep: SoakLastStep | null;
}

export interface SoakPage {
  start(options: { heartbeat?: { intervalMs: number; timeoutMs: number } }): Promise<string>;
  request(spec: SoakRequest): Promise<SoakOutcome>;
  /** Unloads the model (ending every tab's turns) and loads the embedded one again. */
  reload(): Promise<void>;
  /** Leaves the engine and joins it again (after the worker ended this tab for its silence). */
  rejoin(): Promise<string>;
  counters(): SoakCounters;
  /** The shared worker's live GPU buffers (workers/worker-engine.ts debugGpuMemory), over a port of this page's own. */
  gpuMemory(): Promise<{ bytes: number; count: number }>;
}

/** The worker's debug read, which the tab proxy forwards as it does any EngineApi call. */
interface GpuMemoryApi {
  debugGpuMemory(): Promise<{ bytes: number; count: number }>;
}

declare global {
  interface Window {
    cohortSoak: SoakPage;
  }
}

let engine: BrowserEngine | null = null;
let debugApi: Comlink.Remote<GpuMemoryApi> | null = null;
let startOptions: Parameters<SoakPage['start']>[0] = {};
const counters: SoakCounters = { started: 0, ended: 0, endedLate: 0, doubleEnds: 0, steps: 0, chunks: 0, lastStep: null };

async function join(): Promise<string> {
  const joined = await createEngine({ shared: true, heartbeat: startOptions.heartbeat, model: { kind: 'embedded' } });
  joined.onStep((event) => {
    counters.steps++;
    counters.lastStep = { stepIndex: event.stepIndex, kvBlocksUsed: event.kvBlocksUsed, numRunning: event.numRunning, queueDepth: event.queueDepth };
  });
  engine = joined;
  return joined.workerKind;
}

/** Runs one request to its end; `outcome` is filled in as chunks come. */
async function drive(live: BrowserEngine, spec: SoakRequest, controller: AbortController, outcome: SoakOutcome): Promise<void> {
  if (!spec.stream) {
    const completion: ChatCompletion = await live.chat.completions.create({ ...spec.params, stream: false }, { signal: controller.signal });
    outcome.finishReasons = completion.choices.map((c) => c.finish_reason);
    if (completion.choices.length !== (spec.params.n ?? 1) || outcome.finishReasons.some((r) => !r)) counters.doubleEnds++;
    outcome.completionTokens = completion.usage.completion_tokens;
    return;
  }
  const stream = await live.chat.completions.create({ ...spec.params, stream: true, stream_options: { include_usage: true } }, { signal: controller.signal });
  for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
    outcome.numChunks++;
    counters.chunks++;
    for (const choice of chunk.choices) {
      // a choice that already finished must not speak again
      if (outcome.finishReasons[choice.index]) counters.doubleEnds++;
      if (choice.finish_reason) outcome.finishReasons[choice.index] = choice.finish_reason;
    }
    if (chunk.usage) outcome.completionTokens = chunk.usage.completion_tokens;
    if (spec.abortAfterChunks !== undefined && outcome.numChunks >= spec.abortAfterChunks && !outcome.aborted) {
      outcome.aborted = true;
      controller.abort();
    }
  }
}

window.cohortSoak = {
  async start(options) {
    startOptions = options;
    return join();
  },
  async request(spec) {
    const live = engine;
    if (!live) throw new Error('cohortSoak.start() first');
    counters.started++;
    const startMs = performance.now();
    const controller = new AbortController();
    const outcome: SoakOutcome = { end: 'ok', errorName: null, errorMessage: null, aborted: false, numChunks: 0, finishReasons: [], completionTokens: 0, elapsedMs: 0 };
    let pastDeadline = false;
    const ran = drive(live, spec, controller, outcome).then(
      () => 'ok' as const,
      (err: unknown) => {
        outcome.errorName = (err as Error).name;
        outcome.errorMessage = (err as Error).message;
        return 'error' as const;
      },
    );
    void ran.then(() => {
      if (pastDeadline) counters.endedLate++;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<'deadline'>((resolve) => (timer = setTimeout(() => resolve('deadline'), spec.deadlineMs)));
    const end = await Promise.race([ran, deadline]);
    clearTimeout(timer);
    if (end === 'deadline') {
      pastDeadline = true;
      controller.abort(); // let it end if it can; it is reported as 'deadline' whatever follows
    }
    outcome.end = end;
    counters.ended++;
    outcome.elapsedMs = performance.now() - startMs;
    return outcome;
  },
  async reload() {
    const live = engine;
    if (!live) throw new Error('cohortSoak.start() first');
    await live.unload();
    await live.load({ kind: 'embedded' });
  },
  async rejoin() {
    engine?.terminate();
    engine = null;
    return join();
  },
  counters: () => structuredClone(counters),
  gpuMemory() {
    // the same URL and name as the library's, so the same worker
    debugApi ??= Comlink.wrap<GpuMemoryApi>(new SharedWorker(new URL('../../workers/engine.shared-worker.ts', import.meta.url), { type: 'module', name: 'cohort-engine' }).port);
    return debugApi.debugGpuMemory();
  },
};
