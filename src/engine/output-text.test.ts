// Tests of OutputText: streamed deltas, stop strings held back across tokens, split characters.
// Uses the byte tokenizer; EOS and token limits belong to Request and are tested with the scheduler.
import { describe, expect, it } from 'vitest';
import { OutputText } from './output-text';
import { ByteTokenizer } from './testing/test-support';

const tokenizer = new ByteTokenizer();
const bytes = (s: string): number[] => tokenizer.encode(s);

function stream(text: OutputText, ids: number[]): { deltas: string[]; stoppedAt: number } {
  const deltas: string[] = [];
  let stoppedAt = -1;
  ids.forEach((id, i) => {
    const { delta, stopped } = text.push(id);
    deltas.push(delta);
    if (stopped && stoppedAt < 0) stoppedAt = i;
  });
  return { deltas, stoppedAt };
}

describe('OutputText', () => {
  it('streams one delta per token when no stop string can start', () => {
    const { deltas, stoppedAt } = stream(new OutputText(tokenizer, ['END']), bytes('hello'));
    expect(deltas).toEqual(['h', 'e', 'l', 'l', 'o']);
    expect(stoppedAt).toBe(-1);
  });

  it('holds back a possible stop-string start and cuts the text before the stop string', () => {
    const out = new OutputText(tokenizer, ['END']);
    const { deltas, stoppedAt } = stream(out, bytes('aENbENDzz'));
    expect(deltas.slice(0, 4)).toEqual(['a', '', '', 'ENb']);
    expect(stoppedAt).toBe(6);
    expect(deltas.join('') + out.flush()).toBe('aENb');
  });

  it('releases held-back text at the end when no stop string completed', () => {
    const out = new OutputText(tokenizer, ['END']);
    const { deltas } = stream(out, bytes('xyEN'));
    expect(deltas.join('')).toBe('xy');
    expect(out.flush()).toBe('EN');
    expect(out.emittedText).toBe('xyEN');
  });

  it('waits for the last byte of a multi-byte character', () => {
    const out = new OutputText(tokenizer, []);
    const { deltas } = stream(out, bytes('é!'));
    expect(deltas).toEqual(['', 'é', '!']);
  });

  it('finds the earliest of several stop strings', () => {
    const out = new OutputText(tokenizer, ['cd', 'bcdx']);
    const { deltas, stoppedAt } = stream(out, bytes('abcdx'));
    expect(stoppedAt).toBe(3);
    expect(deltas.join('') + out.flush()).toBe('ab');
  });
});
