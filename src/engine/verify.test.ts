// Tests of verification as a pure function over ids: the accepted run of drafts and the id past it,
// and the first invalid id (NaN/Inf logits, a negative or fractional id) cutting the run.
import { describe, expect, it } from 'vitest';
import { NON_FINITE_LOGITS } from './types';
import { invalidIdMessage, verifyDrafts } from './verify';

describe('verifyDrafts', () => {
  it('keeps the drafts equal to the id sampled in their place, then the first id past them', () => {
    expect(verifyDrafts(5, [], [])).toEqual({ tokenIds: [5], numAccepted: 0 });
    expect(verifyDrafts(5, [5, 6, 7], [6, 7, 8])).toEqual({ tokenIds: [5, 6, 7, 8], numAccepted: 3 });
    expect(verifyDrafts(5, [5, 9, 7], [6, 7, 8])).toEqual({ tokenIds: [5, 6], numAccepted: 1 });
    expect(verifyDrafts(4, [5, 6], [6, 7])).toEqual({ tokenIds: [4], numAccepted: 0 });
  });

  it('stops before the first invalid id and says where it was', () => {
    expect(verifyDrafts(NON_FINITE_LOGITS, [1], [2])).toEqual({ tokenIds: [], numAccepted: 0, invalid: { index: 0, id: NON_FINITE_LOGITS } });
    expect(verifyDrafts(1, [1, 2], [-3, 9])).toEqual({ tokenIds: [1], numAccepted: 1, invalid: { index: 1, id: -3 } });
    expect(verifyDrafts(1, [1], [2.5])).toMatchObject({ tokenIds: [1], invalid: { index: 1, id: 2.5 } });
    expect(invalidIdMessage(NON_FINITE_LOGITS, 12)).toContain('NaN/Inf logits at position 12');
    expect(invalidIdMessage(-3, 12)).toBe('runner returned token id -3');
  });
});
