// A token's shade, percentage and description from its logprob and alternatives.
import { describe, expect, it } from 'vitest';
import type { TokenLogprob } from '../../protocol/events';
import { describeToken, percent, replyConfidence, shadeOf } from './token-shading';

/** A made-up vocabulary: each distinct text its own id. */
const ids = new Map<string, number>();
const idOf = (text: string) => ids.get(text) ?? ids.set(text, ids.size).get(text)!;

const token = (text: string, p: number, top: Array<[string, number]> = []): TokenLogprob => ({
  id: idOf(text),
  token: text,
  logprob: Math.log(p),
  top: top.map(([t, q]) => ({ id: idOf(t), token: t, logprob: Math.log(q) })),
});

describe('token shading', () => {
  it('shades the less likely tokens more, in steps of 0.05', () => {
    expect(shadeOf(0)).toBe(0);
    expect(shadeOf(Math.log(0.5))).toBe(0.5);
    expect(shadeOf(Math.log(0.123))).toBe(0.9);
    expect(shadeOf(-Infinity)).toBe(1);
    expect(shadeOf(Number.NaN)).toBe(1);
  });

  it('reads probabilities as percentages, never below 0.1% shown as 0', () => {
    expect(percent(0)).toBe('100.0%');
    expect(percent(Math.log(0.4321))).toBe('43.2%');
    expect(percent(Math.log(0.0001))).toBe('<0.1%');
    expect(percent(-Infinity)).toBe('<0.1%');
  });

  it('describes a token with its alternatives, itself left out of them, texts quoted', () => {
    expect(describeToken(token(' the', 0.6, [[' the', 0.6], [' a', 0.3], ['\n', 0.05]]))).toBe('" the" 60.0% · alternatives: " a" 30.0%, "\\n" 5.0%');
    expect(describeToken(token('x', 0.9, [['x', 0.9]]))).toBe('"x" 90.0% · the most likely token');
    // sampled at temperature: a token below the top ones has them all as alternatives
    expect(describeToken(token('q', 0.01, [['a', 0.5], ['b', 0.2]]))).toBe('"q" 1.0% · alternatives: "a" 50.0%, "b" 20.0%');
    expect(describeToken(token('z', 0.5))).toBe('"z" 50.0%');
  });

  it('sums up a reply: mean probability and tokens under 50%', () => {
    expect(replyConfidence([])).toBeNull();
    const summary = replyConfidence([token('a', 1), token('b', 0.25), token('c', 0.5)])!;
    expect(summary.meanProbability).toBeCloseTo(0.5833, 4);
    expect(summary.numUnsure).toBe(1);
  });
});
