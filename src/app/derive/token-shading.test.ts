// A token's shade, percentage and description from its logprob and alternatives.
import { describe, expect, it } from 'vitest';
import type { TokenLogprob } from '../../protocol/events';
import { describeSegment, describeToken, percent, replyConfidence, segmentLogprob, shadeOf, tokenSegments } from './token-shading';

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

describe('token segments', () => {
  const t = (token: string, logprob = -0.1): TokenLogprob => ({ id: idOf(token + logprob), token, logprob, top: [] });
  const texts = (segments: ReturnType<typeof tokenSegments>) => segments.map((s) => [s.text, s.tokens.length]);

  it('cuts a reply at its tokens when each decodes to its own text', () => {
    expect(texts(tokenSegments('Hello, world', [t('Hello'), t(','), t(' world')]))).toEqual([['Hello', 1], [',', 1], [' world', 1]]);
  });

  it('a run of partial tokens (bytes of one character) shares that character, its logprob theirs together', () => {
    const bytes = [t('\ufffd', -0.5), t('\ufffd', -0.25), t('\ufffd', -0.25)];
    const segments = tokenSegments('I ❤ it', [t('I'), t(' '), ...bytes, t(' it')]);
    expect(texts(segments)).toEqual([['I', 1], [' ', 1], ['❤', 3], [' it', 1]]);
    expect(segmentLogprob(segments[2]!)).toBe(-1);
    expect(describeSegment(segments[2]!)).toBe('"\ufffd" 60.7% | "\ufffd" 77.9% | "\ufffd" 77.9%');
    // at the end of the reply too
    expect(texts(tokenSegments('ok ❤', [t('ok'), t(' '), ...bytes]))).toEqual([['ok', 1], [' ', 1], ['❤', 3]]);
  });

  it('whitespace a token lost when decoded alone joins it', () => {
    expect(texts(tokenSegments('The cat', [t('The'), t('cat')]))).toEqual([['The', 1], [' cat', 1]]);
  });

  it('a reply cut mid-character, or tokens that do not spell the text, show each token as it decodes', () => {
    // streaming: the character's last byte has not come yet, so the text has none of it
    expect(texts(tokenSegments('ok ', [t('ok'), t(' '), t('\ufffd')]))).toEqual([['ok', 1], [' ', 1], ['\ufffd', 1]]);
    expect(texts(tokenSegments('abc', [t('a'), t('x'), t('c')]))).toEqual([['a', 1], ['x', 1], ['c', 1]]);
    // text no token accounts for follows, unshaded
    expect(texts(tokenSegments('ab!', [t('a'), t('b')]))).toEqual([['a', 1], ['b', 1], ['!', 0]]);
  });
});
