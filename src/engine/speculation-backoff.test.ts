// 'auto' backs off where drafts do not pay, on a simulated clock: a session whose drafts rarely match
// verifies a handful of rows per turn, decodes at plain decode's pace and keeps plain decode's tokens;
// a verify step pays by tokens per measured ms, whatever the cost model thought of it.
import { describe, expect, it } from 'vitest';
import type { StepEvent } from './events';
import type { SessionOptions } from './session-options';
import { MAX_BACKOFF_TOKENS, draftsPaid, newDraftStats, recordPayoff, recordVerification } from './speculation';
import { FakeRunner, type FakeRunnerOptions } from './testing/fake-runner';
import { ClockedRunner, makeEngine, type SimulatedStepCost } from './testing/test-engine';

/**
 * A 128-token turn on a repeating prompt, so prompt lookup always proposes. By default a 64-token
 * vocabulary the fake model samples from by hash (drafts rarely match) on a memory-bound step (a fed
 * token costs 1/20 of the step, so the cost model says drafts are cheap).
 */
async function chatTurn(speculation: SessionOptions['speculation'], cost: SimulatedStepCost = { fixedMs: 10, perTokenMs: 0.5 }, fake: FakeRunnerOptions = { vocabSize: 64, copyRate: 0 }): Promise<{ tokens: number[]; simulatedMs: number; events: StepEvent[] }> {
  const runner = new ClockedRunner(cost, new FakeRunner({ blockSize: 4, numBlocks: 200, maxDraftTokens: 6, ...fake }));
  const engine = makeEngine({ runner, maxTokensPerStep: 64 });
  const id = engine.createSession({ maxNewTokens: 128, speculation, sampling: { temperature: 0 } });
  engine.send(id, Array.from({ length: 40 }, (_, j) => 97 + (j % 5)));
  const events: StepEvent[] = [];
  for (let event = await engine.step(); event; event = await engine.step()) events.push(event);
  const result = await engine.waitForTurn(id);
  return { tokens: result.outputTokenIds, simulatedMs: runner.nowMs, events };
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
    expect(off.simulatedMs / auto.simulatedMs).toBeGreaterThanOrEqual(0.97);
  });

  it('stays at 0.97x of off or better where drafts match but a verified position costs 100x a prompt token', async () => {
    // each sampled position (logits, sampling) costs 20 ms: a prompt chunk samples once, so the fit
    // prices a fed token at 0.2 ms, while a verify row pays 20 ms more per draft
    const cost = { fixedMs: 5, perTokenMs: 0.2, perSampledMs: 20 };
    const fake = { vocabSize: 6, copyRate: 0.7 };
    const off = await chatTurn('off', cost, fake);
    const auto = await chatTurn('auto', cost, fake);
    expect(auto.tokens).toEqual(off.tokens);
    const verifyRows = auto.events.flatMap((e) => e.rows.filter((r) => r.numDrafted));
    expect(verifyRows.reduce((n, r) => n + r.numAccepted!, 0)).toBeGreaterThanOrEqual(verifyRows.length); // drafts match
    expect(verifyRows.length).toBeLessThanOrEqual(10);
    expect(off.simulatedMs / auto.simulatedMs).toBeGreaterThanOrEqual(0.97);
  });

  it('doubles the wait after a verify step that did not pay, halves it after one that did', () => {
    const stats = newDraftStats();
    const waits: number[] = [];
    for (let output = 1; output <= 9; output++) {
      recordVerification(stats, 0, true);
      recordPayoff(stats, false, output);
      waits.push(stats.backoffTokens);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, MAX_BACKOFF_TOKENS, MAX_BACKOFF_TOKENS, MAX_BACKOFF_TOKENS]);
    expect(stats.resumeAt).toBe(9 + MAX_BACKOFF_TOKENS);
    recordVerification(stats, 3, true);
    recordPayoff(stats, true, 80);
    expect(stats.backoffTokens).toBe(32);
    expect(stats.resumeAt).toBe(112);
    expect(stats).toMatchObject({ tested: 9 + 4, accepted: 3 });
    for (let i = 0; i < 6; i++) recordPayoff(stats, true, 120 + i);
    expect(stats.backoffTokens).toBe(0); // drafts pay: every step drafts again
  });

  it('judges a verify step by tokens per measured ms against its rows without drafts', () => {
    // one row, a 10 ms decode step: 1 accepted draft in 15 ms pays (2/15 > 1/10), none in 11 ms does not
    expect(draftsPaid(1, 1, 15, 10)).toBe(true);
    expect(draftsPaid(1, 1, 25, 10)).toBe(false); // accepted, but the step cost more than two decode steps
    expect(draftsPaid(1, 0, 11, 10)).toBe(false);
    expect(draftsPaid(4, 2, 14, 10)).toBe(true);
    // no usable time: any accepted draft pays
    expect(draftsPaid(1, 1, 0, 10)).toBe(true);
    expect(draftsPaid(1, 0, 5, 0)).toBe(false);
  });
});
