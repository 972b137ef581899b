// A seeded schedule through a self-running EngineCore whose runner resolves after a random mix of
// microtasks and macrotasks, with API calls injected at every await point, on a simulated clock:
// everything (runner kinds, delays, step times) comes from the seed, so a seed replays alone. Test-only.
import { expect } from 'vitest';
import { EngineCore } from '../engine-core';
import type { EngineMode, StepEvent } from '../events';
import type { TurnResult } from '../sessions';
import type { Speculation } from '../speculation';
import type { StepBudget } from '../step-budget';
import type { ChatTemplate, ModelRunner, StepMaskFill, StepPlan, StepResult, Tokenizer } from '../types';
import { RunnerWrapper } from './runner-wrapper';
import { makeRandom } from './test-support';

type Random = ReturnType<typeof makeRandom>;

export interface AsyncFuzzSetup {
  /**
   * A fresh runner with an empty KV pool; every call must give the same pool shape. `speculates`
   * (drawn from the seed per runner) says whether it declares maxDraftTokens or refuses drafts.
   */
  makeRunner: (speculates: boolean) => ModelRunner;
  tokenizer: Tokenizer;
  chatTemplate: ChatTemplate;
  /** Token ids prompts may use (within the runner's vocabulary). */
  minTokenId: number;
  maxTokenId: number;
  maxSessions: number;
  maxPromptTokens: number;
  maxNewTokens: number;
  /** How many runner replacements (GPU-loss recoveries) a schedule may inject. */
  maxReplacements: number;
}

export interface AsyncFuzzStats {
  numTurns: number;
  numCancelled: number;
  numReplacements: number;
  numInjected: number;
  /** Drafted tokens accepted, and rejected, over the schedule (0 for a runner that does not speculate). */
  numAccepted: number;
  numRejected: number;
}

interface TurnRecord {
  options: SessionPlan['options'];
  result: TurnResult;
}

interface SessionPlan {
  options: { maxNewTokens: number; temperature: number; seed: number; stopStrings: string[] };
  turns: Array<string | number[]>;
  /** Send the next turn in the same microtask as waitForTurn's answer (the race the loop once lost). */
  backToBack: boolean;
}

/**
 * Resolves after a random mix of microtasks and setImmediate hops (rarely several, where a GPU
 * readback would wait on a timer). No real timers: their order against the loop's setImmediate
 * would depend on the machine's speed, and a failing seed would not fail again alone.
 */
function randomDelay(rnd: Random): Promise<void> {
  const kind = rnd.next();
  if (kind < 0.35) {
    let p = Promise.resolve();
    for (let i = rnd.int(0, 3); i > 0; i--) p = p.then(() => undefined);
    return p;
  }
  if (kind < 0.9) return new Promise((r) => setImmediate(r));
  if (kind < 0.97) return new Promise((r) => setImmediate(() => queueMicrotask(r)));
  let p = Promise.resolve();
  for (let i = rnd.int(2, 6); i > 0; i--) p = p.then(() => new Promise((r) => setImmediate(r)));
  return p;
}

/** execute() calls under way across every runner of the schedule running now, and the most seen. */
let executing = 0;
let maxOverlap = 0;

/**
 * Wraps a runner: random delays around execute(), API calls injected at each await, overlap check,
 * and a step time drawn from the seed on the schedule's simulated clock (what the step budget reads).
 */
class AsyncRunner extends RunnerWrapper {
  constructor(
    inner: ModelRunner,
    private readonly rnd: Random,
    private readonly inject: () => void,
    private readonly clock: { ms: number },
  ) {
    super(inner);
  }

  override async execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    maxOverlap = Math.max(maxOverlap, ++executing);
    try {
      this.clock.ms += 1 + this.rnd.next() * 4 + 0.01 * plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
      this.inject();
      await randomDelay(this.rnd);
      this.inject();
      const result = await this.inner.execute(plan, masks);
      await randomDelay(this.rnd);
      this.inject();
      return result;
    } finally {
      executing--;
    }
  }
}

async function soloRun(setup: AsyncFuzzSetup, options: SessionPlan['options'], promptTokenIds: number[]): Promise<TurnResult> {
  const runner = setup.makeRunner(false);
  // plain decode: a speculating schedule must give exactly these tokens
  const engine = new EngineCore({ runner, tokenizer: setup.tokenizer, chatTemplate: setup.chatTemplate, manualSteps: true, speculation: 'off' });
  const id = engine.createSession({ maxNewTokens: options.maxNewTokens, stopStrings: options.stopStrings, sampling: { temperature: options.temperature }, seed: options.seed });
  engine.send(id, promptTokenIds);
  while (await engine.step());
  runner.dispose();
  return engine.waitForTurn(id);
}

/** Runs one seeded schedule and checks it; returns what it exercised. */
export async function runAsyncSchedule(setup: AsyncFuzzSetup, seed: number): Promise<AsyncFuzzStats> {
  const rnd = makeRandom(seed);
  executing = 0;
  maxOverlap = 0;
  const stats: AsyncFuzzStats = { numTurns: 0, numCancelled: 0, numReplacements: 0, numInjected: 0, numAccepted: 0, numRejected: 0 };
  const speculations: Speculation[] = ['auto', 'off', { maxDraftTokens: 2 }, { maxDraftTokens: 8 }];
  const live: string[] = [];
  const pending: Array<Promise<unknown>> = [];
  let replacing: Promise<void> | null = null;
  const runners: AsyncRunner[] = [];
  const clock = { ms: 0 };
  const makeRunner = (): AsyncRunner => {
    // about one runner in three (a replacement included) refuses drafts
    const runner = new AsyncRunner(setup.makeRunner(rnd.next() < 2 / 3), rnd, inject, clock);
    runners.push(runner);
    return runner;
  };

  const inject = (): void => {
    if (rnd.next() < 0.6) return;
    stats.numInjected++;
    const action = rnd.next();
    const target = live.length > 0 ? rnd.pick(live) : null;
    if (action < 0.2 && target) engine.cancel(target);
    else if (action < 0.3 && target) engine.resetSession(target);
    else if (action < 0.36 && target) {
      engine.closeSession(target);
      live.splice(live.indexOf(target), 1);
    } else if (action < 0.5) engine.setMode(rnd.next() < 0.5 ? 'batched' : 'serialized');
    else if (action < 0.55) engine.setSpeculation(rnd.pick(speculations));
    else if (action < 0.6) engine.setStepBudget(rnd.pick<StepBudget | null>([null, { multiple: 1.5 }, { multiple: 1 }, { maxStepMs: 5 }]));
    else if (action < 0.66 && !replacing && stats.numReplacements < setup.maxReplacements) {
      stats.numReplacements++;
      replacing = engine.replaceRunner(makeRunner()).finally(() => (replacing = null));
      pending.push(replacing);
    }
  };

  const engine = new EngineCore({
    runner: makeRunner(),
    tokenizer: setup.tokenizer,
    chatTemplate: setup.chatTemplate,
    maxTokensPerStep: rnd.pick([8, 32, 512]),
    maxRows: rnd.pick([1, 3, 16]),
    mode: rnd.next() < 0.2 ? ('serialized' as EngineMode) : 'batched',
    stepBudget: rnd.next() < 0.5 ? { multiple: 1.5 } : null,
    speculation: rnd.pick(speculations),
    now: () => clock.ms,
  });
  const finishedCount = new Map<string, number>();
  const lastEvents: StepEvent[] = [];
  engine.subscribe((event: StepEvent) => {
    lastEvents.push(event);
    if (lastEvents.length > 8) lastEvents.shift();
    for (const row of event.rows) {
      stats.numAccepted += row.numAccepted ?? 0;
      stats.numRejected += (row.numDrafted ?? 0) - (row.numAccepted ?? 0);
    }
    for (const done of event.finished) {
      expect(done.reason).toBeTruthy();
      finishedCount.set(done.requestId, (finishedCount.get(done.requestId) ?? 0) + 1);
    }
  });

  const randomTokens = (n: number): number[] => Array.from({ length: n }, () => rnd.int(setup.minTokenId, setup.maxTokenId));
  const plans: SessionPlan[] = Array.from({ length: rnd.int(1, setup.maxSessions) }, () => ({
    options: {
      maxNewTokens: rnd.int(1, setup.maxNewTokens),
      temperature: rnd.next() < 0.5 ? 0 : 0.8,
      seed: rnd.int(0, 1000),
      stopStrings: rnd.next() < 0.2 ? [setup.tokenizer.decode(randomTokens(1))] : [],
    },
    turns: Array.from({ length: rnd.int(1, 4) }, (_, t) => (t > 0 && rnd.next() < 0.3 ? 'more' : randomTokens(rnd.int(1, setup.maxPromptTokens)))),
    backToBack: rnd.next() < 0.6,
  }));

  const records: TurnRecord[] = [];
  const sentRequestIds: string[] = [];
  const actor = async (plan: SessionPlan): Promise<void> => {
    for (let i = rnd.int(0, 4); i > 0; i--) await randomDelay(rnd);
    const { options } = plan;
    const id = engine.createSession({ maxNewTokens: options.maxNewTokens, stopStrings: options.stopStrings, sampling: { temperature: options.temperature }, seed: options.seed });
    live.push(id);
    for (const turn of plan.turns) {
      if (!engine.sessions.has(id)) return; // closed by an injected call
      sentRequestIds.push(engine.send(id, turn));
      const ended = engine.waitForTurn(id); // registered first: a close injected next still answers it
      inject();
      const result = await ended;
      records.push({ options, result });
      inject();
      if (!plan.backToBack) await randomDelay(rnd);
    }
    if (engine.sessions.has(id) && rnd.next() < 0.5) {
      engine.closeSession(id);
      live.splice(live.indexOf(id), 1);
    }
  };

  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = engine as unknown as Record<string, unknown>;
      console.log('DEBUG', JSON.stringify(lastEvents.slice(-4).map((ev) => ({ ...ev, rows: ev.rows.map((r) => ({ ...r, newTokenIds: [...r.newTokenIds] })) }))), { running: e.running, wanted: e.wanted, suspended: e.suspended, hasWork: engine.scheduler.hasWork(), waiting: engine.scheduler.numWaiting, numRunning: engine.scheduler.numRunning, sessions: engine.sessions.list().map((x) => x.state), replacing, records: records.length, sent: sentRequestIds.length, reasons: engine.scheduler.waitingReasons(), pool: engine.pool.stats() });
      reject(new Error(`schedule ${seed} still running after 20 s: a turn never ended`));
    }, 20_000);
  });
  try {
    await Promise.race([Promise.all(plans.map(actor)), deadline]);
    await Promise.race([Promise.all(pending), deadline]);
    await engine.whenIdle();
  } finally {
    clearTimeout(timer);
  }

  // never two execute() calls at once, on one runner or across a replacement
  expect(maxOverlap).toBeLessThanOrEqual(1);
  // every turn sent ended exactly once, and every waiter heard of it
  expect(records.length).toBe(sentRequestIds.length);
  for (const requestId of sentRequestIds) expect({ requestId, ended: finishedCount.get(requestId) ?? 0 }).toEqual({ requestId, ended: 1 });
  for (const { options, result } of records) {
    const solo = await soloRun(setup, options, result.promptTokenIds);
    if (result.finishReason === 'cancelled') {
      stats.numCancelled++;
      expect(solo.outputTokenIds.slice(0, result.outputTokenIds.length)).toEqual(result.outputTokenIds);
    } else {
      expect({ reason: result.finishReason, ids: result.outputTokenIds }).toEqual({ reason: solo.finishReason, ids: solo.outputTokenIds });
    }
  }
  stats.numTurns = records.length;
  expect(engine.kv.numTables).toBe(0);
  expect(engine.pool.stats()).toMatchObject({ numUsed: 0, numShared: 0 });
  await engine.dispose();
  for (const runner of runners) runner.dispose();
  return stats;
}
