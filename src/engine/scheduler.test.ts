// Tests of the scheduler's rules through a manually stepped engine: limits, order, no starvation,
// finished rows leaving at once, preemption under a tight pool, cancel, serialized mode.
import { describe, expect, it } from 'vitest';
import type { StepEvent } from './events';
import { makeRandom, runToIdle } from './testing/test-support';
import { makeEngine, promptTokens } from './testing/test-engine';

describe('Scheduler', () => {
  it('never exceeds the token budget or row cap, and decodes take one token each', async () => {
    const engine = makeEngine({ fake: { numBlocks: 400, blockSize: 4 }, maxTokensPerStep: 37, maxRows: 5 });
    const rnd = makeRandom(7);
    const ids = Array.from({ length: 12 }, () => engine.createSession({ maxNewTokens: rnd.int(1, 30) }));
    ids.forEach((id, i) => engine.send(id, promptTokens(rnd.int(1, 120), i)));
    const events = await runToIdle(engine);
    for (const e of events) {
      expect(e.numTokens).toBeLessThanOrEqual(37);
      expect(e.rows.length).toBeLessThanOrEqual(5);
      for (const row of e.rows) if (row.kind === 'decode') expect(row.numTokens).toBe(1);
    }
    // full steps: the budget is used whenever prompts are waiting
    expect(Math.max(...events.map((e) => e.numTokens))).toBe(37);
    expect(Math.max(...events.map((e) => e.rows.length))).toBe(5);
    expect(events.flatMap((e) => e.finished)).toHaveLength(12);
  });

  it('admits waiting requests in arrival order and starves none', async () => {
    const engine = makeEngine({ fake: { numBlocks: 64, blockSize: 4 }, maxTokensPerStep: 16, maxRows: 3 });
    const ids = Array.from({ length: 10 }, () => engine.createSession({ maxNewTokens: 8 }));
    // long and short prompts interleaved: a short one must not overtake a long one ahead of it
    ids.forEach((id, i) => engine.send(id, promptTokens(i % 2 === 0 ? 90 : 3, i)));
    const events = await runToIdle(engine);
    const firstStep = ids.map((id) => events.findIndex((e) => e.rows.some((r) => r.sessionId === id)));
    expect(firstStep.every((s) => s >= 0)).toBe(true);
    for (let i = 1; i < firstStep.length; i++) expect(firstStep[i]).toBeGreaterThanOrEqual(firstStep[i - 1]);
    expect(events.flatMap((e) => e.finished.map((f) => f.reason))).not.toContain('error');
  });

  it('lets a finished row leave in the same step, freeing its blocks at once', async () => {
    const engine = makeEngine({ fake: { numBlocks: 200, blockSize: 4, eosEvery: 5 }, maxRows: 4 });
    const ids = Array.from({ length: 6 }, (_, i) => engine.createSession({ maxNewTokens: 3 + i * 4 }));
    ids.forEach((id, i) => engine.send(id, promptTokens(10 + i, i)));
    let numChecked = 0;
    const events: StepEvent[] = [];
    for (let event = await engine.step(); event; event = await engine.step()) {
      events.push(event);
      for (const row of event.rows.filter((r) => r.finishReason)) {
        expect(event.finished.map((f) => f.requestId)).toContain(row.requestId);
        expect(engine.kv.blockTable(row.requestId)).toHaveLength(0);
        numChecked++;
      }
    }
    expect(numChecked).toBe(6);
    // no row of a finished request ever appears again
    const finishedAt = new Map(events.flatMap((e) => e.finished.map((f) => [f.requestId, e.stepIndex] as const)));
    for (const e of events) for (const r of e.rows) expect(e.stepIndex).toBeLessThanOrEqual(finishedAt.get(r.requestId)!);
  });

  it('preempts the latest arrival when the pool runs dry, recomputes it, and still gives solo tokens', async () => {
    const runSolo = async (p: number[]): Promise<number[]> => {
      const solo = makeEngine({ fake: { numBlocks: 200, blockSize: 4 } });
      const id = solo.createSession({ maxNewTokens: 40 });
      solo.send(id, p);
      await runToIdle(solo);
      return (await solo.waitForTurn(id)).outputTokenIds;
    };
    // 24 usable blocks (96 positions) for 4 requests that need ~60 positions each
    const engine = makeEngine({ fake: { numBlocks: 25, blockSize: 4 }, maxRows: 4 });
    const prompts = [0, 1, 2, 3].map((i) => promptTokens(20, i));
    const ids = prompts.map(() => engine.createSession({ maxNewTokens: 40 }));
    ids.forEach((id, i) => engine.send(id, prompts[i]));
    const events = await runToIdle(engine);
    const restarts = events.flatMap((e) => e.rows.filter((r) => r.kind === 'prefill' && r.position === 0 && e.stepIndex > 0));
    expect(restarts.length).toBeGreaterThan(0);
    // the earliest arrival is never the one preempted
    expect(restarts.map((r) => r.sessionId)).not.toContain(ids[0]);
    for (const [i, id] of ids.entries()) {
      expect((await engine.waitForTurn(id)).outputTokenIds).toEqual(await runSolo(prompts[i]));
    }
    expect(engine.pool.stats().numUsed).toBe(0);
  });

  it('rejects a prompt larger than the whole pool without stalling others', async () => {
    const engine = makeEngine({ fake: { numBlocks: 5, blockSize: 4 } });
    const big = engine.createSession();
    const small = engine.createSession({ maxNewTokens: 4 });
    engine.send(big, promptTokens(17, 0));
    engine.send(small, promptTokens(5, 1));
    await runToIdle(engine);
    expect((await engine.waitForTurn(big)).finishReason).toBe('error');
    expect(engine.sessions.get(big).state).toBe('error');
    expect((await engine.waitForTurn(small)).finishReason).toBe('length');
  });

  it('stops a request that fills the pool with finish reason length', async () => {
    const engine = makeEngine({ fake: { numBlocks: 5, blockSize: 4 } }); // 16 positions
    const id = engine.createSession({ maxNewTokens: 100 });
    engine.send(id, promptTokens(10, 0));
    await runToIdle(engine);
    const result = await engine.waitForTurn(id);
    expect(result.finishReason).toBe('length');
    expect(result.promptTokenIds.length + result.outputTokenIds.length).toBe(17);
  });

  it('applies a cancel by the next step', async () => {
    const engine = makeEngine({ fake: { numBlocks: 100, blockSize: 4 } });
    const a = engine.createSession({ maxNewTokens: 50 });
    const b = engine.createSession({ maxNewTokens: 50 });
    engine.send(a, promptTokens(8, 0));
    engine.send(b, promptTokens(8, 1));
    await engine.step();
    await engine.step();
    engine.cancel(a);
    const next = await engine.step();
    expect(next?.finished).toEqual([expect.objectContaining({ sessionId: a, reason: 'cancelled' })]);
    expect(next?.rows.map((r) => r.sessionId)).toEqual([b]);
    expect(engine.sessions.get(a).state).toBe('cancelled');
    expect((await engine.waitForTurn(a)).outputTokenIds).toHaveLength(2); // prefill sampled one, a decode one
    await runToIdle(engine);
    expect(engine.pool.stats().numUsed).toBe(0);
  });

  it('serialized mode runs one row per step, each request to completion, in arrival order', async () => {
    const engine = makeEngine({ fake: { numBlocks: 200, blockSize: 4 }, mode: 'serialized', maxTokensPerStep: 8 });
    const ids = Array.from({ length: 4 }, () => engine.createSession({ maxNewTokens: 6 }));
    ids.forEach((id, i) => engine.send(id, promptTokens(10 + 3 * i, i)));
    const events = await runToIdle(engine);
    expect(events.every((e) => e.rows.length <= 1 && e.mode === 'serialized')).toBe(true);
    const order = events.flatMap((e) => e.rows.map((r) => r.sessionId));
    // contiguous runs in arrival order: a,a,a,...,b,b,...
    const runs = order.filter((id, i) => i === 0 || order[i - 1] !== id);
    expect(runs).toEqual(ids);
  });

  it('switching modes mid-run keeps every request going and changes the cohort size', async () => {
    const engine = makeEngine({ fake: { numBlocks: 200, blockSize: 4 }, maxRows: 8 });
    const ids = Array.from({ length: 4 }, () => engine.createSession({ maxNewTokens: 20 }));
    ids.forEach((id, i) => engine.send(id, promptTokens(6, i)));
    for (let i = 0; i < 3; i++) await engine.step();
    engine.setMode('serialized');
    const serial = [];
    for (let i = 0; i < 5; i++) serial.push(await engine.step());
    expect(serial.every((e) => e?.rows.length === 1 && e.rows[0].sessionId === ids[0])).toBe(true);
    engine.setMode('batched');
    const back = await engine.step();
    expect(back?.rows.length).toBe(4);
    await runToIdle(engine);
    for (const id of ids) expect((await engine.waitForTurn(id)).finishReason).toBe('length');
  });
});

describe("the model's context", () => {
  it('refuses a prompt that does not fit it up front, and ends generation at its last position', async () => {
    const engine = makeEngine({ fake: { numBlocks: 200, blockSize: 4, maxContext: 64 } });
    const tooLong = engine.createSession({ maxNewTokens: 8 });
    const nearEnd = engine.createSession({ maxNewTokens: 100 });
    const fine = engine.createSession({ maxNewTokens: 5 });
    engine.send(tooLong, promptTokens(64, 1));
    engine.send(nearEnd, promptTokens(60, 2));
    engine.send(fine, promptTokens(10, 3));
    const events = await runToIdle(engine);
    const finished = new Map(events.flatMap((e) => e.finished).map((f) => [f.sessionId, f]));
    expect(finished.get(tooLong)?.reason).toBe('error');
    expect(finished.get(tooLong)?.error).toMatch(/prompt of 64 tokens does not fit the model's context of 64 tokens/);
    // the refused prompt never rode in a step
    expect(events.some((e) => e.rows.some((r) => r.sessionId === tooLong))).toBe(false);
    expect(finished.get(nearEnd)?.reason).toBe('length');
    const lastPosition = Math.max(...events.flatMap((e) => e.rows.filter((r) => r.sessionId === nearEnd).map((r) => r.position + r.numTokens - 1)));
    expect(lastPosition).toBe(63);
    expect(finished.get(fine)?.reason).toBe('length');
  });
});

describe('wait reasons', () => {
  async function reasonsSeen(numBlocks: number, maxRows: number): Promise<Set<string>> {
    const engine = makeEngine({ fake: { numBlocks, blockSize: 4 }, maxRows });
    const ids = Array.from({ length: 5 }, () => engine.createSession({ maxNewTokens: 12 }));
    ids.forEach((id, i) => engine.send(id, promptTokens(12, i)));
    const events = await runToIdle(engine);
    for (const e of events) {
      expect(e.waiting.length).toBe(e.queueDepth);
      // nobody is both in the cohort and waiting
      const riding = new Set(e.rows.map((r) => r.sessionId));
      for (const w of e.waiting) expect(riding.has(w.sessionId)).toBe(false);
    }
    expect(events.at(-1)!.waiting).toEqual([]);
    return new Set(events.flatMap((e) => e.waiting.map((w) => w.reason)));
  }

  it('says a request is queued when the row cap holds it back', async () => {
    expect(await reasonsSeen(200, 2)).toEqual(new Set(['queued']));
  });

  it('says a request waits for KV memory, or was preempted for it, when the pool is full', async () => {
    // 8 usable blocks of 4 positions; each session grows to 24 tokens (6 blocks)
    const reasons = await reasonsSeen(9, 5);
    expect(reasons).toContain('kv-full');
    expect(reasons).toContain('preempted');
  });
});
