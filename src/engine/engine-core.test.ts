// Tests of EngineCore's own loop: it runs by itself, yields between steps, idles and wakes, emits
// one event per step, survives a failing runner or listener, and applies a cancel mid-step.
import { describe, expect, it } from 'vitest';
import { watchUnhandledRejections } from './testing/unhandled.node';
import type { EngineCore } from './engine-core';
import type { StepEvent } from './events';
import { FakeRunner } from './testing/fake-runner';
import { RunnerWrapper } from './testing/runner-wrapper';
import { makeEngine } from './testing/test-engine';
import type { ModelRunner, StepPlan, StepResult } from './types';

/** Wraps a FakeRunner: can hold a step until released, or fail the next one. */
class ControlledRunner extends RunnerWrapper {
  failNext = false;
  hold: Promise<void> | null = null;
  numCalls = 0;
  constructor() {
    super(new FakeRunner({ numBlocks: 100, blockSize: 4 }));
  }
  override async execute(plan: StepPlan): Promise<StepResult> {
    this.numCalls++;
    if (this.hold) await this.hold;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('device lost');
    }
    return this.inner.execute(plan);
  }
  override dispose(): void {}
}

/** A self-running engine (these tests are about the loop) on `runner`. */
const selfRunning = (runner: ModelRunner = new FakeRunner({ numBlocks: 100, blockSize: 4 })): EngineCore => makeEngine({ runner, manualSteps: false });

describe('EngineCore loop', () => {
  it('runs sends to completion by itself, one event per step, then idles', async () => {
    const engine = selfRunning();
    const events: StepEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const ids = [engine.createSession({ maxNewTokens: 6 }), engine.createSession({ maxNewTokens: 9 })];
    for (const id of ids) engine.send(id, 'hello');
    const results = await Promise.all(ids.map((id) => engine.waitForTurn(id)));
    await engine.whenIdle();
    expect(results.map((r) => r.outputTokenIds.length)).toEqual([6, 9]);
    expect(events.map((e) => e.stepIndex)).toEqual(events.map((_, i) => i));
    expect(events).toHaveLength(9); // one prefill step, then 8 decode steps
    expect(events[0]).toMatchObject({ mode: 'batched', queueDepth: 0, numRunning: 2 });
    expect(events.at(-1)).toMatchObject({ numRunning: 0, kvBlocksUsed: 0 });
    // idle: nothing more happens until new work arrives, then it wakes
    await new Promise((r) => setTimeout(r, 5));
    expect(events).toHaveLength(9);
    engine.send(ids[0], 'again');
    await engine.waitForTurn(ids[0]);
    expect(events.length).toBeGreaterThan(9);
  });

  it('yields to the event loop between steps', async () => {
    const engine = selfRunning();
    let stepsSeenByOtherTask = -1;
    let numSteps = 0;
    engine.subscribe(() => numSteps++);
    const id = engine.createSession({ maxNewTokens: 40 });
    engine.send(id, 'x');
    // a macrotask queued now must run while the engine is still mid-turn
    setTimeout(() => (stepsSeenByOtherTask = numSteps), 0);
    await engine.waitForTurn(id);
    expect(stepsSeenByOtherTask).toBeGreaterThanOrEqual(0);
    expect(stepsSeenByOtherTask).toBeLessThan(40);
  });

  it('a failing step ends its rows with an error and the engine carries on', async () => {
    const runner = new ControlledRunner();
    const engine = selfRunning(runner);
    const a = engine.createSession({ maxNewTokens: 5 });
    runner.failNext = true;
    engine.send(a, 'boom');
    const failed = await engine.waitForTurn(a);
    expect(failed).toMatchObject({ finishReason: 'error', error: 'device lost' });
    expect(engine.sessions.get(a).state).toBe('error');
    expect(engine.sessions.messages(a)).toEqual([]);
    engine.send(a, 'fine');
    expect((await engine.waitForTurn(a)).finishReason).toBe('length');
    expect(engine.pool.stats().numUsed).toBe(0);
  });

  it('a throwing listener does not stop other listeners or the loop', async () => {
    const engine = selfRunning();
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      let numSeen = 0;
      engine.subscribe(() => {
        throw new Error('bad listener');
      });
      engine.subscribe(() => numSeen++);
      const id = engine.createSession({ maxNewTokens: 3 });
      engine.send(id, 'x');
      await engine.waitForTurn(id);
      expect(numSeen).toBe(3);
      expect(errors).toHaveLength(3);
    } finally {
      console.error = original;
    }
  });

  it('a cancel during a step in flight ends the request in that step without its token', async () => {
    const runner = new ControlledRunner();
    const engine = selfRunning(runner);
    const events: StepEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const id = engine.createSession({ maxNewTokens: 100 });
    let release = (): void => {};
    runner.hold = new Promise((r) => (release = r));
    engine.send(id, 'long');
    while (runner.numCalls === 0) await new Promise((r) => setTimeout(r, 0));
    engine.cancel(id); // the first step is still executing
    runner.hold = null;
    release();
    const result = await engine.waitForTurn(id);
    expect(result.finishReason).toBe('cancelled');
    expect(result.outputTokenIds).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0].rows[0]).toMatchObject({ finishReason: 'cancelled', newTokenIds: new Int32Array(0) });
  });

  it('setMode switches the cohort size from the next step', async () => {
    const engine = selfRunning();
    const events: StepEvent[] = [];
    engine.subscribe((e) => events.push(e));
    engine.setMode('serialized');
    const ids = [0, 1, 2].map(() => engine.createSession({ maxNewTokens: 4 }));
    for (const id of ids) engine.send(id, 'q');
    await Promise.all(ids.map((id) => engine.waitForTurn(id)));
    expect(events.every((e) => e.rows.length === 1 && e.mode === 'serialized')).toBe(true);
    expect(events).toHaveLength(12);
  });

  it('dispose stops the loop', async () => {
    const engine = selfRunning();
    const id = engine.createSession({ maxNewTokens: 1000 });
    let numSteps = 0;
    engine.subscribe(() => numSteps++);
    engine.send(id, 'x');
    await engine.dispose();
    await new Promise((r) => setTimeout(r, 5));
    expect(numSteps).toBe(0);
  });
});

/** A runner whose execute() resolves after a macrotask, as every GPU readback does; counts overlaps. */
class MacrotaskRunner extends RunnerWrapper {
  private inFlight = 0;
  maxInFlight = 0;
  constructor() {
    super(new FakeRunner({ numBlocks: 100, blockSize: 4 }));
  }
  override async execute(plan: StepPlan): Promise<StepResult> {
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      await new Promise((r) => setImmediate(r));
      return await this.inner.execute(plan);
    } finally {
      this.inFlight--;
    }
  }
}

describe('EngineCore loop: one owner', () => {
  // Each of these once queued a second loop turn while a step was in flight: the step's update
  // resolves waitForTurn, and the waiter's send() ran before the loop's own continuation.
  const patterns: Record<string, (engine: EngineCore, id: string) => void> = {
    'send right after waitForTurn': (engine, id) => engine.send(id, 'next'),
    'reset right after waitForTurn': (engine, id) => {
      engine.resetSession(id);
      engine.send(id, 'again');
    },
    'cancel of the next turn right after it is sent': (engine, id) => {
      engine.send(id, 'next');
      engine.cancel(id);
    },
  };
  for (const [name, after] of Object.entries(patterns)) {
    it(`${name}, 300 times over a macrotask runner: one step in flight, contiguous steps`, async () => {
      const unhandled = watchUnhandledRejections();
      const runner = new MacrotaskRunner();
      const engine = selfRunning(runner);
      const stepIndexes: number[] = [];
      engine.subscribe((e) => stepIndexes.push(e.stepIndex));
      const id = engine.createSession({ maxNewTokens: 2 });
      engine.send(id, 'turn 1');
      for (let i = 0; i < 300; i++) {
        await engine.waitForTurn(id);
        after(engine, id);
      }
      await engine.waitForTurn(id);
      await engine.whenIdle();
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      expect(runner.maxInFlight).toBe(1);
      expect(stepIndexes).toEqual(stepIndexes.map((_, i) => i));
      expect(engine.pool.stats().numUsed).toBe(0);
    });
  }

  it('close right after waitForTurn, then a new session at once, 300 times', async () => {
    const runner = new MacrotaskRunner();
    const engine = selfRunning(runner);
    let id = engine.createSession({ maxNewTokens: 2 });
    engine.send(id, 'turn');
    for (let i = 0; i < 300; i++) {
      await engine.waitForTurn(id);
      engine.closeSession(id);
      id = engine.createSession({ maxNewTokens: 2 });
      engine.send(id, 'turn');
    }
    await engine.waitForTurn(id);
    await engine.whenIdle();
    expect(runner.maxInFlight).toBe(1);
    expect(engine.pool.stats().numUsed).toBe(0);
  });

  it('replaceRunner and dispose wait for the step actually in flight', async () => {
    const runner = new ControlledRunner();
    const engine = selfRunning(runner);
    const id = engine.createSession({ maxNewTokens: 50 });
    let release = (): void => {};
    runner.hold = new Promise((r) => (release = r));
    engine.send(id, 'x');
    while (runner.numCalls === 0) await new Promise((r) => setTimeout(r, 0));
    engine.send(engine.createSession({ maxNewTokens: 3 }), 'y'); // a wake while the step runs
    let replaced = false;
    const next = new ControlledRunner();
    const replacing = engine.replaceRunner(next).then(() => (replaced = true));
    const late = engine.createSession({ maxNewTokens: 2 });
    engine.send(late, 'z'); // a wake while suspended: it must not leave a finished loop behind
    await new Promise((r) => setTimeout(r, 5));
    expect(replaced).toBe(false); // the held step is still running on the old runner
    runner.hold = null;
    release();
    await replacing;
    await engine.waitForTurn(id);
    expect((await engine.waitForTurn(late)).finishReason).toBe('length');
    expect(next.numCalls).toBeGreaterThan(0);
    expect(runner.numCalls).toBe(1);
    let disposed = false;
    next.hold = new Promise((r) => (release = r));
    const numCallsBefore = next.numCalls;
    engine.send(id, 'more');
    while (next.numCalls === numCallsBefore) await new Promise((r) => setTimeout(r, 0));
    const disposing = engine.dispose().then(() => (disposed = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(disposed).toBe(false);
    next.hold = null;
    release();
    await disposing;
  });

  it('an engine fault (not the runner) ends every turn with it and the loop carries on', async () => {
    const engine = selfRunning(new MacrotaskRunner());
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      const a = engine.createSession({ maxNewTokens: 5 });
      const b = engine.createSession({ maxNewTokens: 5 });
      const schedule = engine.scheduler.schedule.bind(engine.scheduler);
      let failOnce = true;
      engine.scheduler.schedule = () => {
        if (failOnce) {
          failOnce = false;
          throw new Error('scheduler bug');
        }
        return schedule();
      };
      engine.send(a, 'x');
      engine.send(b, 'y');
      const results = await Promise.all([engine.waitForTurn(a), engine.waitForTurn(b)]);
      expect(results.map((r) => [r.finishReason, r.error])).toEqual([
        ['error', 'scheduler bug'],
        ['error', 'scheduler bug'],
      ]);
      expect(errors).toHaveLength(1);
      engine.send(a, 'again');
      expect((await engine.waitForTurn(a)).finishReason).toBe('length');
      expect(engine.pool.stats().numUsed).toBe(0);
    } finally {
      console.error = original;
    }
  });

  it('failAll ends every turn, the one in flight after its step', async () => {
    const runner = new ControlledRunner();
    const engine = selfRunning(runner);
    const a = engine.createSession({ maxNewTokens: 50 });
    let release = (): void => {};
    runner.hold = new Promise((r) => (release = r));
    engine.send(a, 'x');
    while (runner.numCalls === 0) await new Promise((r) => setTimeout(r, 0));
    const failing = engine.failAll(new Error('no device'));
    runner.hold = null;
    release();
    await failing;
    expect(await engine.waitForTurn(a)).toMatchObject({ finishReason: 'error', error: 'no device' });
    expect(runner.numCalls).toBe(1);
    expect(engine.pool.stats().numUsed).toBe(0);
  });

  it('step() is for manual engines only', () => {
    expect(() => selfRunning().step()).toThrow(/manual-stepping/);
  });
});

describe('EngineCore.replaceRunner', () => {
  it('carries every session on with a fresh runner (empty KV): same outputs as without the swap', async () => {
    const prompts = ['first prompt here', 'second, a little longer prompt', 'x', 'shared prefix shared prefix one', 'shared prefix shared prefix two'];
    const run = async (swapAfterSteps: number | null) => {
      const engine = makeEngine({ fake: { numBlocks: 100, blockSize: 4 } });
      const ids = prompts.map(() => engine.createSession({ maxNewTokens: 12 }));
      ids.forEach((id, i) => engine.send(id, prompts[i]!));
      const results = ids.map((id) => engine.waitForTurn(id));
      let steps = 0;
      while (await engine.step()) {
        if (++steps === swapAfterSteps) {
          // the new runner's KV is empty: reading a block the old one wrote would change tokens
          await engine.replaceRunner(new FakeRunner({ numBlocks: 100, blockSize: 4 }));
        }
      }
      expect(engine.pool.stats().numUsed).toBe(0);
      return (await Promise.all(results)).map((r) => r.outputTokenIds.join(','));
    };
    const plain = await run(null);
    expect(await run(4)).toEqual(plain);
    expect(await run(9)).toEqual(plain);
  });

  it('refuses a runner with another pool shape', async () => {
    const engine = makeEngine({ fake: { numBlocks: 100, blockSize: 4 } });
    await expect(engine.replaceRunner(new FakeRunner({ numBlocks: 50, blockSize: 4 }))).rejects.toThrow(/same KV pool/);
  });
});
