// The host in-process, as a library user drives it: await one turn, start the next in the same
// microtask, reset or close right after a step, over a runner whose execute() awaits a macrotask.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchUnhandledRejections } from '../engine/testing/unhandled.node';
import { RunnerWrapper } from '../engine/testing/runner-wrapper';
import type { StepPlan, StepResult } from '../engine/types';
import { CpuRunner } from '../reference/cpu-runner';
import { EngineHost } from './engine-host';
import { serveSyntheticModel } from './testing/host-fixtures';

const NUM_TURNS = Number(process.env.LOOP_TURNS ?? 2000);

/** CpuRunner answering after a macrotask, as every GPU readback does. */
class ReadbackRunner extends RunnerWrapper {
  override async execute(plan: StepPlan): Promise<StepResult> {
    await new Promise((r) => setImmediate(r));
    return this.inner.execute(plan);
  }
}

let served: Awaited<ReturnType<typeof serveSyntheticModel>>;
beforeAll(async () => {
  served = await serveSyntheticModel();
});
afterAll(() => served.close());

describe('EngineHost in-process, turns back to back', () => {
  it(`send the moment waitForTurn answers, reset and close right after a step: ${NUM_TURNS} turns, no error`, async () => {
    const unhandled = watchUnhandledRejections();
    const api = new EngineHost({ makeRunner: async (model) => new ReadbackRunner(new CpuRunner(model, { numBlocks: 65 })), embeddedModelUrl: `${served.origin}/good/`, pageOrigin: served.origin });
    await api.loadModel({ kind: 'embedded' });
    const stepIndexes: number[] = [];
    await api.subscribe((e) => stepIndexes.push(e.stepIndex));
    let s = await api.createSession({ maxNewTokens: 4 });
    await api.send(s, 'turn 1');
    const reasons = new Map<string, number>();
    for (let i = 0; i < NUM_TURNS; i++) {
      const result = await api.waitForTurn(s);
      reasons.set(result.finishReason, (reasons.get(result.finishReason) ?? 0) + 1);
      if (i % 4 === 1) await api.resetSession(s);
      if (i % 4 === 3) {
        await api.closeSession(s);
        s = await api.createSession({ maxNewTokens: 4 });
      }
      await api.send(s, `turn ${i + 2}`); // the very next microtask
    }
    await api.waitForTurn(s);
    await api.unloadModel();
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
    // Every turn ends by length, or on an end token (<|endoftext|> ends a turn, as in llama.cpp): none by error.
    expect([...reasons.keys()].filter((reason) => reason !== 'length' && reason !== 'eos')).toEqual([]);
    expect(reasons.get('length')).toBeGreaterThan(0);
    expect(stepIndexes).toEqual(stepIndexes.map((_, i) => i));
  }, 600_000);
});
