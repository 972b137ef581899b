// The engine's handling of a row the sampler marked NON_FINITE_LOGITS: that turn ends with an
// error, the other rows of the step carry on unchanged. Runner numerics are tested in src/gpu.
import { describe, expect, it } from 'vitest';
import type { StepEvent } from './events';
import { FakeRunner } from './testing/fake-runner';
import { RunnerWrapper } from './testing/runner-wrapper';
import { runToIdle } from './testing/test-support';
import { makeEngine } from './testing/test-engine';
import { NON_FINITE_LOGITS, type StepPlan, type StepResult } from './types';

/** FakeRunner whose rows of the sessions in `poisoned` sample NON_FINITE_LOGITS once they reach `fromPos`. */
class PoisonedRunner extends RunnerWrapper {
  poisoned = new Set<string>();
  fromPos = 0;

  constructor() {
    super(new FakeRunner({ numBlocks: 64, blockSize: 4 }));
  }

  override async execute(plan: StepPlan): Promise<StepResult> {
    const result = await this.inner.execute(plan);
    plan.rows.forEach((row, r) => {
      const pos = row.startPos + row.tokenIds.length;
      if (row.sample && this.poisoned.has(row.sessionId) && pos >= this.fromPos) result.sampledIds[r] = NON_FINITE_LOGITS;
    });
    return result;
  }
}

describe('non-finite logits', () => {
  it('end only the turn whose row produced them, with the error; the other row of each step completes as if alone', async () => {
    const prompt = Array.from({ length: 6 }, (_, i) => 100 + i);
    const solo = makeEngine({ runner: new PoisonedRunner() });
    const soloId = solo.createSession({ maxNewTokens: 8 });
    solo.send(soloId, prompt);
    await runToIdle(solo);
    const alone = await solo.waitForTurn(soloId);

    const runner = new PoisonedRunner();
    const engine = makeEngine({ runner });
    const bad = engine.createSession({ maxNewTokens: 8 });
    const good = engine.createSession({ maxNewTokens: 8 });
    runner.poisoned.add(bad);
    runner.fromPos = 9; // the bad session samples positions 6, 7, 8 normally, then position 9 is NaN
    engine.send(bad, prompt.map((id) => id + 1));
    engine.send(good, prompt);
    const events = await runToIdle(engine);

    const badTurn = await engine.waitForTurn(bad);
    expect(badTurn.finishReason).toBe('error');
    expect(badTurn.error).toBe('the model produced NaN/Inf logits at position 9; the turn was stopped');
    expect(badTurn.outputTokenIds).toHaveLength(3);
    expect(engine.sessions.get(bad)).toMatchObject({ state: 'error', stats: { finishReason: 'error', error: badTurn.error } });
    expect(engine.sessions.messages(bad)).toEqual([]); // the failed turn leaves the history

    const goodTurn = await engine.waitForTurn(good);
    expect(goodTurn.finishReason).toBe('length');
    expect(goodTurn.outputTokenIds).toEqual(alone.outputTokenIds);

    // the step that ended the bad turn also carried the good one, which went on
    const failing = events.find((e: StepEvent) => e.finished.some((f) => f.sessionId === bad)) as StepEvent;
    expect(failing.rows.map((r) => [r.sessionId, r.finishReason])).toEqual([
      [bad, 'error'],
      [good, undefined],
    ]);
    expect(failing.rows[0].newTokenIds).toHaveLength(0); // the sentinel never reaches the output
    expect(failing.finished).toEqual([expect.objectContaining({ sessionId: bad, reason: 'error', error: badTurn.error })]);
    expect(failing.numRunning).toBe(1);

    // the session itself is fine: a later turn runs once the logits are finite again
    runner.poisoned.clear();
    engine.send(bad, prompt);
    await runToIdle(engine);
    expect((await engine.waitForTurn(bad)).finishReason).toBe('length');
  });

  it('a runner that returns no logprobs ends only the turn that asked for them, with why', async () => {
    const engine = makeEngine({ fake: { numBlocks: 64, blockSize: 4 } });
    const asks = engine.createSession({ maxNewTokens: 4, sampling: { logprobs: 2 } });
    const plain = engine.createSession({ maxNewTokens: 4 });
    engine.send(asks, [100, 101, 102]);
    engine.send(plain, [100, 101, 102]);
    await runToIdle(engine);
    expect(await engine.waitForTurn(asks)).toMatchObject({ finishReason: 'error', error: 'the runner returned no logprobs for 1 tokens' });
    expect((await engine.waitForTurn(plain)).outputTokenIds).toHaveLength(4);
  });
});
