// 'auto' backs off where drafts do not pay, on a simulated clock: a session whose drafts rarely match
// verifies a handful of rows per turn, decodes at plain decode's pace and keeps plain decode's tokens.
import { describe, expect, it } from 'vitest';
import type { StepEvent } from './events';
import type { SessionOptions } from './session-options';
import { MAX_BACKOFF_TOKENS, newDraftStats, recordVerification } from './speculation';
import { FakeRunner } from './testing/fake-runner';
import { ClockedRunner, makeEngine } from './testing/test-engine';

/** A chat-like turn: a repeating prompt, so prompt lookup always proposes; a 64-token vocabulary the fake model samples from by hash, so drafts rarely match. */
async function chatTurn(speculation: SessionOptions['speculation']): Promise<{ tokens: number[]; ms: number; events: StepEvent[] }> {
  // a memory-bound step: a fed token costs 1/20 of the step, so the cost model says drafts are cheap
  const runner = new ClockedRunner({ fixedMs: 10, perTokenMs: 0.5 }, new FakeRunner({ blockSize: 4, numBlocks: 200, vocabSize: 64, copyRate: 0, maxDraftTokens: 6 }));
  const engine = makeEngine({ runner, maxTokensPerStep: 64 });
  const id = engine.createSession({ maxNewTokens: 128, speculation, sampling: { temperature: 0 } });
  engine.send(id, Array.from({ length: 40 }, (_, j) => 97 + (j % 5)));
  const events: StepEvent[] = [];
  for (let event = await engine.step(); event; event = await engine.step()) events.push(event);
  const result = await engine.waitForTurn(id);
  return { tokens: result.outputTokenIds, ms: runner.nowMs, events };
}

describe("speculation 'auto' backoff", () => {
  it('verifies a handful of rows in a 128-token turn whose drafts rarely match, and decodes at 0.97x of speculation off or better', async () => {
    const off = await chatTurn('off');
    const auto = await chatTurn('auto');
    expect(auto.tokens).toEqual(off.tokens);
    expect(off.tokens).toHaveLength(128);
    const verifyRows = auto.events.flatMap((e) => e.rows.filter((r) => r.numDrafted));
    const numAccepted = verifyRows.reduce((n, r) => n + r.numAccepted!, 0);
    expect(numAccepted).toBeLessThanOrEqual(2); // the drafts did rarely match
    // after each verification that gained nothing the wait doubles: 1, 2, 4, ... 64 output tokens
    expect(verifyRows.length).toBeGreaterThanOrEqual(3);
    expect(verifyRows.length).toBeLessThanOrEqual(10);
    const positions = verifyRows.map((r) => r.position);
    // the i-th wait is at least 2^i tokens (longer where prompt lookup had nothing to propose)
    positions.slice(1).forEach((p, i) => expect(p - positions[i]!).toBeGreaterThanOrEqual(2 ** i));
    // tokens per simulated ms, 'auto' over 'off'
    expect(off.ms / auto.ms).toBeGreaterThanOrEqual(0.97);
  });

  it('doubles the wait after a verification that accepted nothing, halves it after one that paid', () => {
    const stats = newDraftStats();
    const waits: number[] = [];
    for (let output = 1; output <= 9; output++) {
      recordVerification(stats, 0, true, output);
      waits.push(stats.backoffTokens);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, MAX_BACKOFF_TOKENS, MAX_BACKOFF_TOKENS, MAX_BACKOFF_TOKENS]);
    expect(stats.resumeAt).toBe(9 + MAX_BACKOFF_TOKENS);
    recordVerification(stats, 3, true, 80);
    expect(stats.backoffTokens).toBe(32);
    expect(stats.resumeAt).toBe(112);
    expect(stats).toMatchObject({ tested: 9 + 4, accepted: 3 });
    for (let i = 0; i < 6; i++) recordVerification(stats, 1, false, 120 + i);
    expect(stats.backoffTokens).toBe(0); // drafts pay: every step drafts again
  });
});
