// Tests of the speculation policy: settings combined, the acceptance estimate, and draft lengths
// chosen against a known step cost (load-adaptive, within the token and time budgets).
import { describe, expect, it } from 'vitest';
import { EXPLORE_DRAFT_TOKENS, acceptanceRate, chooseDraftLengths, combineSpeculation, type DraftCandidate, type DraftLimits } from './speculation';
import type { StepShape } from './step-cost';

/** A runner whose step costs fixedMs plus perTokenMs per fed token. */
const linearCost = (fixedMs: number, perTokenMs: number) => (shape: StepShape) => fixedMs + perTokenMs * shape.numTokens;

/** `n` decode rows at position 100, each with 8 proposed drafts and acceptance `a`. */
function decodeRows(n: number, a: number, fixed = false): { rows: DraftCandidate[]; base: StepShape } {
  const rows = Array.from({ length: n }, () => ({ drafts: [1, 2, 3, 4, 5, 6, 7, 8], fixed, acceptance: a, startPos: 100, numTokens: 1 }));
  return { rows, base: { numTokens: n, numRows: n, attended: n * 101 } };
}

function limitsFor(n: number, cost: (s: StepShape) => number, extra: Partial<DraftLimits> = {}): DraftLimits {
  return { cost, calibrated: true, decodeRate: n / cost({ numTokens: n, numRows: n, attended: 0 }), budgetTokens: 4096, target: { kind: 'off' }, ...extra };
}

describe('combineSpeculation and acceptanceRate', () => {
  it("'off' on either side wins, then the session's explicit length, then the engine's", () => {
    expect(combineSpeculation('off', { maxDraftTokens: 3 })).toBe('off');
    expect(combineSpeculation({ maxDraftTokens: 3 }, 'off')).toBe('off');
    expect(combineSpeculation({ maxDraftTokens: 3 }, { maxDraftTokens: 5 })).toEqual({ maxDraftTokens: 5 });
    expect(combineSpeculation({ maxDraftTokens: 3 }, 'auto')).toEqual({ maxDraftTokens: 3 });
    expect(combineSpeculation('auto', 'auto')).toBe('auto');
  });

  it('starts at one half and follows the measured outcomes', () => {
    expect(acceptanceRate(0, 0)).toBe(0.5);
    expect(acceptanceRate(98, 98)).toBeGreaterThan(0.98);
    expect(acceptanceRate(0, 50)).toBeLessThan(0.02);
  });
});

describe('chooseDraftLengths', () => {
  it('drafts long where a fed token costs little beside the step, and nothing where it costs a row', () => {
    const { rows, base } = decodeRows(1, 0.8);
    const memoryBound = linearCost(10, 0.05);
    expect(chooseDraftLengths(rows, base, limitsFor(1, memoryBound))).toEqual([8]);
    const computeBound = linearCost(0.01, 1);
    expect(chooseDraftLengths(rows, base, limitsFor(1, computeBound))).toEqual([0]);
  });

  it('goes to 0 by itself at large cohorts and at low acceptance', () => {
    const cost = linearCost(10, 0.2);
    const k = (n: number, a: number): number => {
      const { rows, base } = decodeRows(n, a);
      const lengths = chooseDraftLengths(rows, base, limitsFor(n, cost));
      expect(new Set(lengths).size).toBeLessThanOrEqual(2); // like rows get like lengths (within one)
      return Math.max(...lengths);
    };
    const byCohort = [1, 4, 16, 64, 256].map((n) => k(n, 0.7));
    for (let i = 1; i < byCohort.length; i++) expect(byCohort[i]).toBeLessThanOrEqual(byCohort[i - 1]);
    expect(byCohort[0]).toBeGreaterThan(4);
    expect(byCohort[byCohort.length - 1]).toBe(0);
    expect(k(1, 0.01)).toBe(0);
    expect(k(4, 0.95)).toBeGreaterThan(k(4, 0.5));
  });

  it('spends drafts where acceptance is highest first', () => {
    const rows: DraftCandidate[] = [0.3, 0.9].map((acceptance) => ({ drafts: [1, 2, 3, 4, 5, 6], fixed: false, acceptance, startPos: 10, numTokens: 1 }));
    const lengths = chooseDraftLengths(rows, { numTokens: 2, numRows: 2, attended: 22 }, limitsFor(2, linearCost(10, 1)));
    expect(lengths[1]).toBeGreaterThan(lengths[0]);
  });

  it('keeps the token budget and the step-time target, fixed lengths included', () => {
    const { rows, base } = decodeRows(4, 0.9, true);
    const cost = linearCost(10, 1);
    expect(chooseDraftLengths(rows, base, limitsFor(4, cost)).reduce((a, b) => a + b, 0)).toBe(32);
    expect(chooseDraftLengths(rows, base, limitsFor(4, cost, { budgetTokens: 5 })).reduce((a, b) => a + b, 0)).toBe(5);
    // base step 14 ms; a 20 ms target leaves room for 6 drafted tokens
    expect(chooseDraftLengths(rows, base, limitsFor(4, cost, { target: { kind: 'ms', ms: 20 } })).reduce((a, b) => a + b, 0)).toBe(6);
    // a bound that cannot be checked yet (the model calibrating under a budget): no drafts
    expect(chooseDraftLengths(rows, base, limitsFor(4, cost, { target: { kind: 'calibrating' } }))).toEqual([0, 0, 0, 0]);
  });

  it("explores a few drafts per 'auto' row while the cost model calibrates", () => {
    const { rows, base } = decodeRows(3, 0.5);
    expect(chooseDraftLengths(rows, base, limitsFor(3, linearCost(0.01, 1), { calibrated: false }))).toEqual([EXPLORE_DRAFT_TOKENS, EXPLORE_DRAFT_TOKENS, EXPLORE_DRAFT_TOKENS]);
  });
});
