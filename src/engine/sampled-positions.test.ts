// Tests of a plan's sampled positions and their inverse: the order every runner samples in, each
// position's token and key, and ids split back into rows and drafts (and refused when too few).
import { describe, expect, it } from 'vitest';
import { numSampledPositions, sampledPosition, sampledRows, sampledTokenIndex, splitSampledIds } from './sampled-positions';
import type { StepRow } from './types';

const row = (startPos: number, numTokens: number, sample: boolean, numDraftTokens = 0): StepRow => ({
  sessionId: `s${startPos}`,
  tokenIds: new Int32Array(numTokens),
  startPos,
  blockTables: [new Int32Array(1)],
  sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 },
  sample,
  ...(numDraftTokens > 0 ? { numDraftTokens } : {}),
});

describe('sampled positions', () => {
  // a prefill chunk that does not sample, a decode row, a verify row with 3 drafts, a last prompt chunk
  const rows = [row(0, 16, false), row(40, 1, true), row(7, 4, true, 3), row(100, 5, true)];

  it('sample after each row\'s last known token, then after each draft, rows in plan order', () => {
    expect(rows.map(numSampledPositions)).toEqual([0, 1, 4, 1]);
    expect(sampledRows(rows)).toEqual([1, 2, 2, 2, 2, 3]);
    // the verify row feeds its known token at 7 and drafts at 8, 9, 10: it samples after each
    expect([0, 1, 2, 3].map((i) => sampledTokenIndex(rows[2], i))).toEqual([0, 1, 2, 3]);
    expect([0, 1, 2, 3].map((i) => sampledPosition(rows[2], i))).toEqual([8, 9, 10, 11]);
    expect(sampledPosition(rows[1], 0)).toBe(41);
    expect(sampledTokenIndex(rows[3], 0)).toBe(4);
    expect(sampledPosition(rows[3], 0)).toBe(105);
  });

  it('split ids back into each row\'s first and the ids after its drafts', () => {
    const { sampledIds, draftSampledIds } = splitSampledIds(rows, [10, 20, 21, 22, 23, 30]);
    expect([...sampledIds]).toEqual([-1, 10, 20, 30]);
    expect([...draftSampledIds!]).toEqual([21, 22, 23]);
    const plain = splitSampledIds([rows[1], rows[3]], new Int32Array([5, 6]));
    expect([...plain.sampledIds]).toEqual([5, 6]);
    expect(plain.draftSampledIds).toBeUndefined();
  });

  it('refuses fewer ids than the plan samples', () => {
    expect(() => splitSampledIds(rows, [1, 2, 3])).toThrow(/3 sampled ids for a plan that samples 6 positions/);
  });
});
