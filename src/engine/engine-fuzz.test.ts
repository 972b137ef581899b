// Randomized schedules through the whole engine (sessions, scheduler, KV manager, pool) against
// the FakeRunner, speculating in some and with a sliding window in some: every turn must produce
// exactly its solo tokens (solo runs never speculate and keep every position of a window), and the
// pools must end empty.
import { describe, expect, it } from 'vitest';
import type { EngineCore } from './engine-core';
import type { EngineMode, StepEvent } from './events';
import type { Speculation } from './speculation';
import { FakeRunner } from './testing/fake-runner';
import { RunnerWrapper } from './testing/runner-wrapper';
import type { TurnResult } from './sessions';
import { ByteTokenizer, makeRandom } from './testing/test-support';
import { makeEngine } from './testing/test-engine';
import type { StepPlan, StepResult } from './types';

const NUM_SCHEDULES = Number(process.env.FUZZ_N ?? 520);
const tokenizer = new ByteTokenizer();

interface Scenario {
  blockSize: number;
  numBlocks: number;
  maxTokensPerStep: number;
  maxRows: number;
  mode: EngineMode;
  switchModeAtStep: number;
  enablePrefixCaching: boolean;
  /** The runner's maxDraftTokens (0: it refuses drafts) and the engine's speculation setting. */
  maxDraftTokens: number;
  speculation: Speculation;
  /** The runner's sliding window (0: none); the engine under test frees out-of-window blocks. */
  window: number;
}

/** Checks each plan before the fake forward: limits, and that no row writes a block another can see. */
class CheckingRunner extends RunnerWrapper {
  engine?: EngineCore;

  override execute(plan: StepPlan): Promise<StepResult> {
    const engine = this.engine;
    if (!engine) throw new Error('engine not attached');
    const scheduler = engine.scheduler;
    const numTokens = plan.rows.reduce((n, r) => n + r.tokenIds.length, 0);
    expect(numTokens).toBeLessThanOrEqual(scheduler.settings.maxTokensPerStep);
    expect(plan.rows.length).toBeLessThanOrEqual(scheduler.rowCap);
    expect(new Set(plan.rows.map((r) => r.sessionId)).size).toBe(plan.rows.length);
    for (const row of plan.rows) {
      const numDrafts = row.numDraftTokens ?? 0;
      if (numDrafts > 0) {
        // drafts follow the row's last known token, whose sample they are verified against
        expect(row.sample).toBe(true);
        expect(numDrafts).toBeLessThanOrEqual(this.maxDraftTokens ?? 0);
        expect(row.tokenIds.length).toBe(numDrafts + 1);
        expect(row.startPos + row.tokenIds.length).toBeLessThanOrEqual(scheduler.contextLimit);
      }
      const first = Math.floor(row.startPos / this.blockSize);
      const last = Math.floor((row.startPos + row.tokenIds.length - 1) / this.blockSize);
      expect(row.blockTables).toHaveLength(engine.kv.groups.length);
      engine.kv.groups.forEach(({ pool, window }, g) => {
        const table = row.blockTables[g]!;
        for (let b = first; b <= last; b++) {
          const blockId = table[b]!;
          // a block being written belongs to this row alone and is not yet in the prefix cache, in every group
          expect(pool.refCount(blockId)).toBe(1);
          expect(pool.isCached(blockId)).toBe(false);
          for (const other of plan.rows) if (other !== row) expect(Array.from(other.blockTables[g]!)).not.toContain(blockId);
        }
        expect(table.length).toBe(row.blockTables[0]!.length);
        if (window === null) return;
        // a sliding-window group's row holds only the window's blocks: those its first token sees, and this step's own
        const held = table.filter((id) => id !== 0).length;
        expect(held).toBeLessThanOrEqual(Math.ceil((window - 1 + row.tokenIds.length) / this.blockSize) + 1);
      });
    }
    return this.inner.execute(plan);
  }
}

/** The scenario's runner; `slidingGroup` false: a window's positions read from the first group's pool, every one kept. */
function makeRunner(s: Scenario, slidingGroup = true): FakeRunner {
  // speculating scenarios copy often, so prompt-lookup drafts are often accepted
  const copyRate = s.maxDraftTokens > 0 ? 0.6 : 0;
  return new FakeRunner({ blockSize: s.blockSize, numBlocks: s.numBlocks, eosEvery: 29, vocabSize: 12, maxDraftTokens: s.maxDraftTokens, copyRate, window: s.window, slidingGroup });
}

interface TurnSpec {
  sessionId: string;
  options: { maxTokens: number; stopStrings: string[]; temperature: number; seed: number };
}

async function soloRun(s: Scenario, spec: TurnSpec, promptTokenIds: number[]): Promise<TurnResult> {
  const engine = makeEngine({ runner: makeRunner(s, false), speculation: 'off' });
  const id = engine.createSession({
    maxNewTokens: spec.options.maxTokens,
    stopStrings: spec.options.stopStrings,
    sampling: { temperature: spec.options.temperature },
    seed: spec.options.seed,
  });
  engine.send(id, promptTokenIds);
  while (await engine.step());
  return engine.waitForTurn(id);
}

async function runScenario(seed: number): Promise<{ numTurns: number; numPreempted: number; numPrefixHits: number; numAccepted: number; numRejected: number; numWindowed: number }> {
  const rnd = makeRandom(seed);
  // its own stream, so the schedules drawn below stay those of the seed
  const speculating = makeRandom(seed ^ 0x5bec);
  const maxDraftTokens = speculating.next() < 0.6 ? speculating.int(1, 6) : 0;
  const speculation: Speculation = speculating.pick(['auto', 'off', { maxDraftTokens: speculating.int(1, 6) }, { maxDraftTokens: 4 }]);
  // and its own for the window, from 1 position (each token sees itself) to longer than most turns
  const windowing = makeRandom(seed ^ 0x51d3);
  const window = windowing.next() < 0.5 ? 0 : windowing.pick([1, 2, 5, 16, 33, windowing.int(1, 120)]);
  const blockSize = rnd.pick([2, 4, 8, 16]);
  const capacityTokens = rnd.int(40, 700);
  const s: Scenario = {
    blockSize,
    numBlocks: 1 + Math.ceil(capacityTokens / blockSize),
    maxTokensPerStep: rnd.pick([1, 3, 16, 64, 512]),
    maxRows: rnd.pick([1, 2, 3, 8, 16]),
    mode: rnd.next() < 0.25 ? 'serialized' : 'batched',
    switchModeAtStep: rnd.next() < 0.3 ? rnd.int(1, 60) : -1,
    enablePrefixCaching: rnd.next() < 0.85,
    maxDraftTokens,
    speculation,
    window,
  };
  const checking = new CheckingRunner(makeRunner(s));
  // makeEngine's clock: 'auto' speculation sizes drafts from step times, which must come from the seed
  const engine = makeEngine({
    runner: checking,
    maxTokensPerStep: s.maxTokensPerStep,
    maxRows: s.maxRows,
    enablePrefixCaching: s.enablePrefixCaching,
    mode: s.mode,
    speculation: s.speculation,
  });
  checking.engine = engine;

  // shared prefixes make prefix-cache hits (and their eviction) likely
  const bases = [rnd.int(0, 200), rnd.int(0, 200)].map((n) => Array.from({ length: n }, () => rnd.int(97, 122)));
  const numSessions = rnd.int(1, 8);
  type Plan = { spec: TurnSpec; arriveAt: number; turns: Array<string | number[]>; cancelAt: number; closeAt: number };
  const plans: Plan[] = [];
  for (let i = 0; i < numSessions; i++) {
    const promptLength = rnd.int(1, 300);
    const base = rnd.next() < 0.5 ? rnd.pick(bases) : [];
    const tokens = [...base, ...Array.from({ length: promptLength }, () => rnd.int(32, 126))].slice(0, promptLength);
    const numTurns = rnd.int(1, 2);
    const turns: Array<string | number[]> = [];
    for (let t = 0; t < numTurns; t++) {
      turns.push(rnd.next() < 0.5 ? tokenizer.decode(tokens).slice(0, rnd.int(1, 60)) || 'x' : t === 0 ? tokens : [rnd.int(32, 126)]);
    }
    plans.push({
      spec: {
        sessionId: '',
        options: {
          maxTokens: rnd.int(1, 40),
          stopStrings: rnd.next() < 0.3 ? [rnd.pick(['q', 'ab', 'zz', 'kk'])] : [],
          temperature: rnd.next() < 0.5 ? 0 : 0.7,
          seed: rnd.int(0, 1000),
        },
      },
      arriveAt: rnd.int(0, 40),
      turns,
      cancelAt: rnd.next() < 0.15 ? rnd.int(0, 80) : -1,
      closeAt: rnd.next() < 0.1 ? rnd.int(0, 80) : -1,
    });
  }

  const results: Array<{ spec: TurnSpec; result: TurnResult }> = [];
  const events: StepEvent[] = [];
  const nextTurn = new Map<Plan, number>();
  const computedEnd = new Map<string, number>();
  let numPreempted = 0;
  let numPrefixHits = 0;
  let numAccepted = 0;
  let numRejected = 0;
  const send = (p: Plan, turn: number): void => {
    engine.send(p.spec.sessionId, p.turns[turn]);
    nextTurn.set(p, turn + 1);
    // registered now, so a turn ended by close() (session gone) still reports its result
    void engine.waitForTurn(p.spec.sessionId).then((result) => results.push({ spec: p.spec, result }));
  };
  for (let step = 0; step < 20_000; step++) {
    if (step === s.switchModeAtStep) engine.setMode(s.mode === 'batched' ? 'serialized' : 'batched');
    for (const p of plans) {
      if (step === p.arriveAt) {
        p.spec.sessionId = engine.createSession({
          systemPrompt: rnd.next() < 0.5 ? 'sys' : undefined,
          maxNewTokens: p.spec.options.maxTokens,
          stopStrings: p.spec.options.stopStrings,
          sampling: { temperature: p.spec.options.temperature },
          seed: p.spec.options.seed,
        });
        send(p, 0);
      }
      const live = p.spec.sessionId !== '' && engine.sessions.has(p.spec.sessionId);
      if (live && step === p.cancelAt) engine.cancel(p.spec.sessionId);
      if (live && step === p.closeAt) engine.closeSession(p.spec.sessionId);
    }
    const event = await engine.step();
    if (event) {
      events.push(event);
      for (const row of event.rows) {
        // a row starting before what its request already computed is a recompute after preemption
        if (row.position < (computedEnd.get(row.requestId) ?? 0)) numPreempted++;
        if (!computedEnd.has(row.requestId) && row.position > 0) numPrefixHits++;
        // rejected drafts are fed but not computed: the next row starts after the accepted ones
        const numRejectedHere = (row.numDrafted ?? 0) - (row.numAccepted ?? 0);
        computedEnd.set(row.requestId, row.position + row.numTokens - numRejectedHere);
        numAccepted += row.numAccepted ?? 0;
        numRejected += numRejectedHere;
      }
      for (const done of event.finished) {
        const p = plans.find((q) => q.spec.sessionId === done.sessionId);
        if (!p) throw new Error(`unknown session ${done.sessionId}`);
        const t = nextTurn.get(p) ?? 0;
        if (t < p.turns.length && engine.sessions.has(p.spec.sessionId)) send(p, t);
      }
    }
    const pendingArrivals = plans.some((p) => p.arriveAt > step);
    if (!event && !pendingArrivals) break;
  }

  expect(results.length).toBe([...nextTurn.values()].reduce((a, b) => a + b, 0));
  // every turn's tokens equal its solo run; a cancelled turn's are a prefix of it
  for (const { spec, result } of results) {
    const solo = await soloRun(s, spec, result.promptTokenIds);
    if (result.finishReason === 'cancelled') {
      expect(solo.outputTokenIds.slice(0, result.outputTokenIds.length)).toEqual(result.outputTokenIds);
    } else {
      expect({ reason: result.finishReason, ids: result.outputTokenIds, text: result.text }).toEqual({
        reason: solo.finishReason,
        ids: solo.outputTokenIds,
        text: solo.text,
      });
    }
  }
  expect(results.length).toBeGreaterThan(0);
  // nothing in use at the end; cached free blocks are all reclaimable
  expect(engine.kv.numTables).toBe(0);
  expect(engine.pool.stats()).toMatchObject({ numUsed: 0, numShared: 0, numFree: engine.pool.numUsable });
  const all = engine.pool.allocate(engine.pool.numUsable);
  expect(new Set(all).size).toBe(engine.pool.numUsable);
  expect(engine.pool.stats().numCached).toBe(0);
  for (const { pool } of engine.kv.groups.slice(1)) expect(pool.stats()).toMatchObject({ numUsed: 0, numShared: 0, numFree: pool.numUsable });
  const numWindowed = window > 0 ? events.filter((e) => e.rows.some((r) => r.position + r.numTokens > window)).length : 0;
  return { numTurns: results.length, numPreempted, numPrefixHits, numAccepted, numRejected, numWindowed };
}

describe('engine under random schedules', () => {
  it(`gives every turn its solo tokens and returns every block (${NUM_SCHEDULES} seeded schedules)`, async () => {
    let numTurns = 0;
    let numPreempted = 0;
    let numPrefixHits = 0;
    let numAccepted = 0;
    let numRejected = 0;
    let numWindowed = 0;
    for (let seed = 1; seed <= NUM_SCHEDULES; seed++) {
      try {
        const r = await runScenario(seed);
        numWindowed += r.numWindowed;
        numTurns += r.numTurns;
        numPreempted += r.numPreempted;
        numPrefixHits += r.numPrefixHits;
        numAccepted += r.numAccepted;
        numRejected += r.numRejected;
      } catch (err) {
        throw new Error(`seed ${seed}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    }
    // the schedules must actually exercise many turns, preemption/recompute and prefix-cache hits
    expect(numTurns).toBeGreaterThan(1000);
    expect(numPreempted).toBeGreaterThan(50);
    expect(numPrefixHits).toBeGreaterThan(50);
    // and speculation, with drafts both accepted and rolled back
    expect(numAccepted).toBeGreaterThan(NUM_SCHEDULES);
    expect(numRejected).toBeGreaterThan(NUM_SCHEDULES);
    // and sliding windows, with steps past the window (whose blocks go back)
    expect(numWindowed).toBeGreaterThan(10 * NUM_SCHEDULES);
  }, 600_000);
});
