// Tests of StreamDecoder: text leaves only as complete UTF-8, and the streamed pieces always
// add up to the whole decode (byte-level and SentencePiece vocabularies).

import { describe, expect, it } from 'vitest';
import { tokenizerFromGguf } from './gguf-vocab';
import { HfTokenizer } from './tokenizer';
import { byteLevelFiles, smallSpmGguf } from './tokenizer-fixtures';
import { StreamDecoder } from './tokenizer-stream';

const byteLevel = HfTokenizer.fromFiles(byteLevelFiles());

function streamAll(decoder: StreamDecoder, ids: number[]): string[] {
  const pieces = ids.map((id) => decoder.push(id));
  pieces.push(decoder.flush());
  return pieces;
}

describe('StreamDecoder', () => {
  it('holds back a character split across byte tokens', () => {
    const decoder = new StreamDecoder(byteLevel);
    expect(decoder.push(72)).toBe('H');
    expect(decoder.push(0xc3)).toBe('');
    expect(decoder.push(0xa9)).toBe('é');
    // U+1F600 is four bytes.
    expect([0xf0, 0x9f, 0x98, 0x80].map((id) => decoder.push(id))).toEqual(['', '', '', '😀']);
    expect(decoder.flush()).toBe('');
  });

  it('adds up to the whole decode for mixed scripts', () => {
    const text = 'Note 0042: naïve café, 中文, emoji 😀🎉 and MAPLE-7890.\n';
    const ids = byteLevel.encode(text);
    const pieces = streamAll(new StreamDecoder(byteLevel), ids);
    expect(pieces.join('')).toBe(text);
    expect(pieces.every((p) => !p.includes('\uFFFD'))).toBe(true);
    // Characters arrive whole: no piece holds half a surrogate pair (it would not survive UTF-8).
    const roundTrip = (p: string): string => new TextDecoder().decode(new TextEncoder().encode(p));
    expect(pieces.every((p) => roundTrip(p) === p)).toBe(true);
  });

  it('emits special tokens or skips them as asked', () => {
    expect(streamAll(new StreamDecoder(byteLevel), [72, 258]).join('')).toBe('H<|im_end|>');
    expect(streamAll(new StreamDecoder(byteLevel, { skipSpecialTokens: true }), [72, 258, 105])).toEqual(['H', '', 'i', '']);
  });

  it('flushes an unfinished character at the end of a stream as U+FFFD', () => {
    const decoder = new StreamDecoder(byteLevel);
    expect(decoder.push(65)).toBe('A');
    expect(decoder.push(0xe2)).toBe('');
    expect(decoder.push(0x82)).toBe('');
    expect(decoder.flush()).toBe('\uFFFD');
    // The decoder starts afresh after a flush.
    expect(decoder.push(66)).toBe('B');
  });

  it('passes through invalid bytes once later text arrives', () => {
    const decoder = new StreamDecoder(byteLevel);
    expect(decoder.push(0xff)).toBe('');
    expect(decoder.push(65)).toBe('\uFFFDA');
  });

  it('keeps SentencePiece word spaces that a lone token would lose', () => {
    const spm = tokenizerFromGguf(smallSpmGguf());
    // ▁hello ▁wor ld ▁hello, then "é" as two byte-fallback tokens.
    const ids = [271, 274, 275, 271, 3 + 0xc3, 3 + 0xa9];
    expect(spm.decode([274])).toBe('wor');
    const pieces = streamAll(new StreamDecoder(spm), ids);
    expect(pieces).toEqual(['hello', ' wor', 'ld', ' hello', '', 'é', '']);
    expect(pieces.join('')).toBe(spm.decode(ids));
  });
});
