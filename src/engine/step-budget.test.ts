// Tests of the step-time budget through a manually stepped engine on a fake clock: a runner whose
// steps cost a + b*tokens + c*rows + d*attended ms. Checks stall-free joins, cancel, tokens, bounds.
import { describe, expect, it } from 'vitest';
import type { EngineCore } from './engine-core';
import type { StepEvent } from './events';
import { InvalidOptionError } from './errors';
import { MIN_PREFILL_TOKENS, UNCALIBRATED_PREFILL_TOKENS, validateStepBudget, type StepBudget } from './step-budget';
import { FakeRunner } from './testing/fake-runner';
import { makeRandom, runToIdle } from './testing/test-support';
import { ClockedRunner, makeEngine, promptTokens, type SimulatedStepCost } from './testing/test-engine';

const SYNTHETIC: SimulatedStepCost = { fixedMs: 5, perTokenMs: 0.2, perRowMs: 1, perAttendedMs: 0.0001 };

/** An engine on a FakeRunner whose steps cost `cost` on its simulated clock. */
function clockedEngine(stepBudget: StepBudget | null, cost = SYNTHETIC): { engine: EngineCore; runner: ClockedRunner } {
  const runner = new ClockedRunner(cost, new FakeRunner({ numBlocks: 400, blockSize: 16 }));
  return { engine: makeEngine({ runner, stepBudget }), runner };
}

/** When each session got each token: the end of the step that sampled it. */
function tokenTimes(events: StepEvent[], sessionId: string): number[] {
  return events.filter((e) => e.rows.some((r) => r.sessionId === sessionId && r.newTokenIds.length > 0)).map((e) => e.startedAtMs + e.elapsedMs);
}

const gaps = (times: number[]): number[] => times.slice(1).map((t, i) => t - times[i]);
const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

interface JoinRun {
  before: StepEvent[];
  after: StepEvent[];
  decoders: string[];
  long: string;
  outputs: number[][];
}

/** 4 sessions decoding, then a 1,866-token prompt joins; runs until the prompt's turn ends, then to idle. */
async function joinScenario(stepBudget: StepBudget | null): Promise<JoinRun & { engine: EngineCore }> {
  const { engine } = clockedEngine(stepBudget);
  const decoders = [0, 1, 2, 3].map(() => engine.createSession({ maxNewTokens: 400 }));
  decoders.forEach((id, i) => engine.send(id, promptTokens(20 + i, i)));
  const before: StepEvent[] = [];
  for (let i = 0; i < 40; i++) before.push((await engine.step())!);
  const long = engine.createSession({ maxNewTokens: 4 });
  engine.send(long, promptTokens(1866, 9));
  const after: StepEvent[] = [];
  while (engine.sessions.get(long).state !== 'done') after.push((await engine.step())!);
  await runToIdle(engine);
  const outputs = await Promise.all([...decoders, long].map(async (id) => (await engine.waitForTurn(id)).outputTokenIds));
  return { engine, before, after, decoders, long, outputs };
}

describe('step-time budget', () => {
  it('keeps every calibrated step within its target and decoders within 3x their gap while a long prompt joins', async () => {
    const run = await joinScenario({ multiple: 2 });
    // the decoders' prompts rode in the runner's first step, which the model skips (warm-up), so
    // it learns per-token cost from the prompt's first chunks, held to the uncalibrated size
    const calibrating = run.after.filter((e) => !e.stepBudget?.calibrated);
    expect(calibrating.length).toBeLessThanOrEqual(3);
    for (const e of calibrating) expect(e.numTokens - 4).toBeLessThanOrEqual(UNCALIBRATED_PREFILL_TOKENS);
    const budgeted = run.after.filter((e) => e.stepBudget?.calibrated && e.stepBudget.targetMs !== undefined);
    expect(budgeted.length).toBe(run.after.length - calibrating.length);
    for (const e of budgeted) {
      expect(e.elapsedMs).toBeLessThanOrEqual(e.stepBudget!.targetMs! + 1e-9);
      // the model matches the synthetic runner (it fits exactly when the cost is exactly linear)
      expect(Math.abs(e.stepBudget!.predictedMs! - e.elapsedMs)).toBeLessThanOrEqual(0.02 * e.elapsedMs);
      expect(e.stepBudget!.targetMs).toBeCloseTo(2 * e.stepBudget!.decodeOnlyMs!, 9);
    }
    for (const id of run.decoders) {
      const beforeGap = median(gaps(tokenTimes(run.before, id).slice(-20)));
      const joined = gaps(tokenTimes([...run.before.slice(-1), ...run.after], id));
      expect(Math.max(...joined)).toBeLessThanOrEqual(3 * beforeGap);
    }
    // the prompt still progressed every step, more than the floor where the target left room
    const chunks = run.after.flatMap((e) => e.rows.filter((r) => r.sessionId === run.long && r.kind === 'prefill').map((r) => r.numTokens));
    expect(chunks.reduce((n, c) => n + c, 0)).toBe(1866);
    expect(Math.min(...chunks.slice(0, -1))).toBeGreaterThanOrEqual(MIN_PREFILL_TOKENS);
    expect(Math.max(...chunks)).toBeGreaterThan(MIN_PREFILL_TOKENS);
    expect((await run.engine.waitForTurn(run.long)).finishReason).toBe('length');
  });

  it('gives the same tokens as the token budget alone, which stalls decoders', async () => {
    const off = await joinScenario(null);
    const on = await joinScenario({ multiple: 2 });
    expect(on.outputs).toEqual(off.outputs);
    expect(off.after.every((e) => e.stepBudget === undefined)).toBe(true);
    // today's behaviour: one step carries the whole token budget, and decoders wait on it
    expect(off.after[0].numTokens).toBe(512);
    const offGap = Math.max(...gaps(tokenTimes([...off.before.slice(-1), ...off.after], off.decoders[0])));
    expect(offGap).toBeGreaterThan(10 * median(gaps(tokenTimes(off.before.slice(-20), off.decoders[0]))));
    expect(on.after.length).toBeGreaterThan(off.after.length);
  });

  it('chunks never change tokens: random costs, budgets and arrivals against the budget off', async () => {
    const rnd = makeRandom(17);
    let numChunkier = 0;
    for (let trial = 0; trial < 12; trial++) {
      const cost: SimulatedStepCost = { fixedMs: rnd.int(1, 20), perTokenMs: rnd.next(), perRowMs: rnd.next() * 3, perAttendedMs: rnd.next() * 0.001 };
      const budget: StepBudget = rnd.next() < 0.5 ? { multiple: 1 + rnd.next() * 3 } : { multiple: 2, maxStepMs: 5 + rnd.next() * 50 };
      const lengths = Array.from({ length: rnd.int(2, 7) }, () => rnd.int(1, 700));
      const arriveAt = lengths.map(() => rnd.int(0, 30));
      const maxNew = lengths.map(() => rnd.int(1, 60));
      const run = async (stepBudget: StepBudget | null): Promise<{ outputs: number[][]; numSteps: number }> => {
        const { engine } = clockedEngine(stepBudget, cost);
        let numSteps = 0;
        const ids = lengths.map((_, i) => engine.createSession({ maxNewTokens: maxNew[i], sampling: { temperature: i % 2 ? 0.7 : 0, seed: i } }));
        for (let step = 0; step <= 30 || engine.scheduler.hasWork(); step++) {
          ids.forEach((id, i) => arriveAt[i] === step && engine.send(id, promptTokens(lengths[i], i + trial)));
          if (await engine.step()) numSteps++;
        }
        return { outputs: await Promise.all(ids.map(async (id) => (await engine.waitForTurn(id)).outputTokenIds)), numSteps };
      };
      const on = await run(budget);
      const off = await run(null);
      expect(on.outputs, `trial ${trial}`).toEqual(off.outputs);
      if (on.numSteps > off.numSteps) numChunkier++;
    }
    expect(numChunkier).toBeGreaterThanOrEqual(8); // the budget did cut chunks in most trials
  });

  it('holds prefill to a small fixed chunk until the model is calibrated', async () => {
    const { engine } = clockedEngine({ multiple: 2 });
    const ids = [0, 1, 2].map(() => engine.createSession({ maxNewTokens: 50 }));
    ids.forEach((id, i) => engine.send(id, promptTokens(100, i)));
    const first = await engine.step();
    expect(first?.stepBudget).toEqual({ calibrated: false });
    // no decoders yet and no maxStepMs: nothing bounds the first steps by time
    expect(first?.numTokens).toBe(300);
    const more = engine.createSession({ maxNewTokens: 5 });
    engine.send(more, promptTokens(200, 7));
    const next = await engine.step();
    expect(next?.stepBudget?.calibrated).toBe(false);
    expect(next?.rows.filter((r) => r.kind === 'prefill').reduce((n, r) => n + r.numTokens, 0)).toBe(UNCALIBRATED_PREFILL_TOKENS);
  });

  it('bounds steps without decode rows by maxStepMs', async () => {
    const { engine } = clockedEngine({ maxStepMs: 30 });
    const warm = engine.createSession({ maxNewTokens: 2 });
    engine.send(warm, promptTokens(300, 1)); // calibrates on chunks of its own
    await runToIdle(engine);
    const id = engine.createSession({ maxNewTokens: 2 });
    engine.send(id, promptTokens(1000, 2));
    const events = await runToIdle(engine);
    const calibrated = events.filter((e) => e.stepBudget?.calibrated);
    expect(calibrated.length).toBeGreaterThan(10);
    for (const e of calibrated) {
      expect(e.stepBudget?.targetMs).toBe(30);
      expect(e.elapsedMs).toBeLessThanOrEqual(30);
    }
  });

  it('applies a cancel at the next step boundary, which the budget keeps short', async () => {
    const { engine, runner } = clockedEngine({ multiple: 2 });
    const decoders = [0, 1, 2, 3].map(() => engine.createSession({ maxNewTokens: 400 }));
    decoders.forEach((id, i) => engine.send(id, promptTokens(20 + i, i)));
    for (let i = 0; i < 40; i++) await engine.step();
    const long = engine.createSession({ maxNewTokens: 4 });
    engine.send(long, promptTokens(1866, 9));
    for (let i = 0; i < 10; i++) await engine.step();
    const cancelledAt = runner.nowMs;
    engine.cancel(long);
    engine.cancel(decoders[0]);
    const next = await engine.step();
    expect(new Set(next?.finished.map((f) => `${f.sessionId} ${f.reason}`))).toEqual(new Set([`${long} cancelled`, `${decoders[0]} cancelled`]));
    expect(next?.rows.map((r) => r.sessionId)).toEqual(decoders.slice(1));
    expect(runner.nowMs - cancelledAt).toBeLessThanOrEqual(next!.stepBudget!.targetMs!);
  });

  it('switches on and off between steps; off is the token budget alone', async () => {
    const { engine } = clockedEngine({ multiple: 2 });
    const decoders = [0, 1].map(() => engine.createSession({ maxNewTokens: 200 }));
    engine.send(decoders[0], promptTokens(40, 0));
    await engine.step();
    engine.send(decoders[1], promptTokens(200, 1)); // prefilled in chunks beside a decoder: calibrates the model
    for (let i = 0; i < 20; i++) await engine.step();
    expect(engine.scheduler.stepCost.calibrated).toBe(true);
    engine.setStepBudget(null);
    expect(engine.stepBudget).toBeNull();
    const long = engine.createSession({ maxNewTokens: 2 });
    engine.send(long, promptTokens(1000, 3));
    const off = await engine.step();
    expect(off?.stepBudget).toBeUndefined();
    expect(off?.numTokens).toBe(512);
    engine.setStepBudget({ multiple: 3 });
    const on = await engine.step();
    expect(on?.stepBudget?.calibrated).toBe(true);
    expect(on?.stepBudget?.targetMs).toBeCloseTo(3 * on!.stepBudget!.decodeOnlyMs!, 9);
    expect(on!.numTokens).toBeGreaterThan(2 + MIN_PREFILL_TOKENS);
    expect(on!.numTokens).toBeLessThan(100);
    expect(on!.elapsedMs).toBeLessThanOrEqual(on!.stepBudget!.targetMs!);
  });
});

describe('validateStepBudget', () => {
  it('accepts null, a multiple, a ceiling or both, and copies them', () => {
    expect(validateStepBudget(null)).toBeNull();
    const given = { multiple: 2, maxStepMs: 250 };
    const checked = validateStepBudget(given);
    expect(checked).toEqual(given);
    expect(checked).not.toBe(given);
    expect(validateStepBudget({ maxStepMs: 0.5 })).toEqual({ maxStepMs: 0.5 });
    expect(validateStepBudget({ multiple: 1 })).toEqual({ multiple: 1 });
  });

  it.each([
    [undefined, 'stepBudget'],
    [{}, 'stepBudget'],
    [[2], 'stepBudget'],
    ['2x', 'stepBudget'],
    [{ multiple: 0.5 }, 'stepBudget.multiple'],
    [{ multiple: NaN }, 'stepBudget.multiple'],
    [{ multiple: Infinity }, 'stepBudget.multiple'],
    [{ multiple: '2' }, 'stepBudget.multiple'],
    [{ multiple: 2, maxStepMs: 0 }, 'stepBudget.maxStepMs'],
    [{ maxStepMs: -5 }, 'stepBudget.maxStepMs'],
    [{ maxStepMs: 1e9 }, 'stepBudget.maxStepMs'],
  ])('refuses %j naming %s', (value, option) => {
    let error: unknown;
    try {
      validateStepBudget(value);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe(option);
  });

  it('is what the engine checks, leaving the budget as it was on a refusal', () => {
    const { engine } = clockedEngine({ multiple: 3 });
    expect(() => engine.setStepBudget({ multiple: 0 })).toThrow(/stepBudget\.multiple must be a number from 1 to 1000, got 0/);
    expect(engine.stepBudget).toEqual({ multiple: 3 });
    expect(() => clockedEngine({ maxStepMs: NaN })).toThrow(InvalidOptionError);
  });
});
