// Tests of the Compare card's figures: batched over serialized, and speculation on over off with
// the drafting side's acceptance and tokens per row-step, each over its own sessions' steps.
import { describe, expect, it } from 'vitest';
import { row, step } from '../../protocol/testing/step-fixtures';
import { compareOutcome, speculationCompareOutcome } from './compare';

describe('compare figures', () => {
  it('batched over serialized decode tok/s', () => {
    const serialized = { steps: [step(0, 0, 10, [row('s1', 'decode', 1, [1])]), step(1, 10, 10, [row('s2', 'decode', 1, [1])])], sessionIds: new Set(['s1', 's2']) };
    const batched = { steps: [step(2, 20, 10, [row('b1', 'decode', 1, [1]), row('b2', 'decode', 1, [1])])], sessionIds: new Set(['b1', 'b2']) };
    const outcome = compareOutcome(serialized, batched);
    expect(outcome.serialized.tokensPerSec).toBeCloseTo(100);
    expect(outcome.batched.tokensPerSec).toBeCloseTo(200);
    expect(outcome.ratio).toBeCloseTo(2);
  });

  it('speculation on over off: what the verify rows made, their acceptance and tokens per row-step', () => {
    const off = { steps: [step(0, 0, 10, [row('o1', 'decode', 1, [1])]), step(1, 10, 10, [row('o1', 'decode', 1, [1])])], sessionIds: new Set(['o1']) };
    // one step of 12 ms: 4 drafted, 3 accepted, 4 tokens made; one other session's row is left out
    const on = { steps: [step(2, 20, 12, [row('d1', 'decode', 5, [1, 2, 3, 4], '', { numDrafted: 4, numAccepted: 3 }), row('x', 'decode', 1, [1])])], sessionIds: new Set(['d1']) };
    const outcome = speculationCompareOutcome(off, on);
    expect(outcome.off.tokensPerSec).toBeCloseTo(100);
    expect(outcome.on.decodeTokens).toBe(4);
    expect(outcome.on.tokensPerSec).toBeCloseTo(4000 / 12);
    expect(outcome.ratio).toBeCloseTo(4000 / 12 / 100);
    expect(outcome.onFigures).toMatchObject({ numDrafted: 4, numAccepted: 3, acceptanceRate: 0.75, tokensPerRowStep: 4 });
  });
});
