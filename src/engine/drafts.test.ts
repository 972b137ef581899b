// Tests of the draft proposers: prompt lookup (longest suffix first, latest occurrence, continuation
// cut to the cap) and drafts from a prediction (aligned while the output follows it, else looked up).
import { describe, expect, it } from 'vitest';
import { lookupDrafts, proposeDrafts } from './drafts';

describe('lookupDrafts (prompt lookup)', () => {
  it('proposes what followed the latest earlier occurrence of the last 3 tokens', () => {
    const seq = [1, 2, 3, 4, 5, 9, 1, 2, 3, 7, 8, 1, 2, 3];
    expect(lookupDrafts(seq, seq, 4)).toEqual([7, 8, 1, 2]);
    expect(lookupDrafts(seq, seq, 1)).toEqual([7]);
  });

  it('falls back from 3 to 2 to 1 matched tokens, and proposes nothing without a match', () => {
    expect(lookupDrafts([5, 2, 3, 6, 9, 2, 3], [5, 2, 3, 6, 9, 2, 3], 2)).toEqual([6, 9]); // [2,3] matches, [9,2,3] not
    const one = [4, 8, 1, 4];
    expect(lookupDrafts(one, one, 5)).toEqual([8, 1, 4]); // continuation stops at the end
    expect(lookupDrafts([1, 2, 3], [1, 2, 3], 4)).toEqual([]);
    expect(lookupDrafts([7], [7], 4)).toEqual([]);
    expect(lookupDrafts([1, 1], [1, 1], 0)).toEqual([]);
  });

  it('never matches the suffix against itself (its continuation is unknown)', () => {
    const run = [6, 6, 6, 6];
    // the latest earlier [6,6,6] starts at 0 and is followed by the last 6
    expect(lookupDrafts(run, run, 3)).toEqual([6]);
  });

  it('searches another sequence (a prediction) to its end', () => {
    expect(lookupDrafts([9, 1, 2], [1, 2, 5, 1, 2, 8], 3)).toEqual([8]);
    expect(lookupDrafts([9, 1, 2], [1, 2], 3)).toEqual([]);
  });
});

describe('proposeDrafts', () => {
  const prompt = [10, 11, 12, 13, 10, 11];
  it('takes the prediction aligned while the output so far equals its start', () => {
    expect(proposeDrafts(prompt, prompt.length, [20, 21, 22, 23], 3)).toEqual([20, 21, 22]);
    expect(proposeDrafts([...prompt, 20, 21], prompt.length, [20, 21, 22, 23], 3)).toEqual([22, 23]);
  });

  it('looks the suffix up in the prediction once the output left it, then in the request itself', () => {
    // output [20, 99, 22]: not the prediction's start, but [22] occurs in it, followed by [23, 24]
    expect(proposeDrafts([...prompt, 20, 99, 22], prompt.length, [20, 21, 22, 23, 24], 5)).toEqual([23, 24]);
    // nothing in the prediction: prompt lookup finds [10, 11] -> 12, 13, ...
    expect(proposeDrafts(prompt, prompt.length, [], 2)).toEqual([12, 13]);
    expect(proposeDrafts([...prompt, 20, 77], prompt.length, [20, 21], 2)).toEqual([]);
  });

  it('after an edit, continues from the occurrence in the prediction nearest the output so far', () => {
    // the prediction repeats [5, 6] twice: lines "5 6 1" and "5 6 2"
    const prediction = [5, 6, 1, 7, 7, 7, 5, 6, 2, 8];
    // an inserted 9, then the first line's [5, 6]: its continuation, not the latest copy's
    expect(proposeDrafts([...prompt, 9, 5, 6], prompt.length, prediction, 2)).toEqual([1, 7]);
    // further on, past an edit in the first line, the second copy is the nearer one
    expect(proposeDrafts([...prompt, 5, 9, 1, 7, 7, 7, 5, 6], prompt.length, prediction, 2)).toEqual([2, 8]);
    // plain lookup (no `near`) takes the latest occurrence wherever the output is
    expect(lookupDrafts([5, 6], prediction, 2)).toEqual([2, 8]);
    expect(lookupDrafts([5, 6], prediction, 2, 1)).toEqual([1, 7]);
  });

  it('proposes nothing for a cap of 0', () => {
    expect(proposeDrafts(prompt, prompt.length, [20], 0)).toEqual([]);
  });
});
