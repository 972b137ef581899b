// Tests of GGUF vocabulary conversion: the default model's byte-level vocabulary, a GPT-2 BPE
// under each supported pre-tokenizer, a SentencePiece vocabulary, and clear failures.

import { describe, expect, it } from 'vitest';
import { ModelFormatError } from './errors';
import { ggufVocabToTokenizerFiles, tokenizerFromGguf } from './gguf-vocab';
import { SUPPORTED_PRE_TOKENIZERS } from './gguf-vocab-pre';
import { HfTokenizer } from './tokenizer';
import { byteLevelFiles, byteLevelGguf, gpt2ByteChars, smallBpeGguf, smallBpeTokenizerJson, smallSpmGguf, spmByteId } from './testing/tokenizer-fixtures';

const SAMPLES = [
  'Hi é',
  "Note 0042: this paragraph is unrelated padding and doesn't contain the answer.",
  'IMPORTANT: the secret code is MAPLE-7890.\n\n  tabs\tand 😀 中文',
  'a<|im_end|>b<|im_start|>',
];

describe('GGUF byte-level vocabulary of the default model', () => {
  const fromJson = HfTokenizer.fromFiles(byteLevelFiles());

  it.each([['default'], [undefined], ['gpt-2'], ['qwen2'], ['llama-bpe']])('matches tokenizer.json with pre=%s', (pre) => {
    const tok = tokenizerFromGguf(byteLevelGguf({ 'tokenizer.ggml.pre': pre }));
    for (const text of SAMPLES) {
      expect(tok.encode(text)).toEqual(fromJson.encode(text));
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
    expect(tok.encode('Hi é')).toEqual([72, 105, 32, 195, 169]);
  });

  it('reads BOS/EOS the way llama.cpp does', () => {
    const tok = tokenizerFromGguf(byteLevelGguf());
    expect(tok.bosTokenId).toBe(256);
    expect(tok.addBosToken).toBe(false);
    // eos_token_id, plus <|endoftext|>, which llama.cpp always counts as end of generation.
    expect([...tok.eosTokenIds].sort()).toEqual([256, 258]);
    expect(tok.isSpecial(257)).toBe(true);
    expect(tok.decode([257, 72, 258])).toBe('<|im_start|>H<|im_end|>');
  });

  it('accepts a missing merges key, typed arrays and bigint ids', () => {
    const base = byteLevelGguf();
    const tok = tokenizerFromGguf({
      ...base,
      'tokenizer.ggml.merges': undefined,
      'tokenizer.ggml.token_type': Int32Array.from(base['tokenizer.ggml.token_type'] as number[]),
      'tokenizer.ggml.eos_token_id': 258n,
    });
    expect(tok.encode('Hi é')).toEqual([72, 105, 32, 195, 169]);
    expect(tok.eosTokenIds).toContain(258);
  });
});

describe('GGUF GPT-2 BPE with merges', () => {
  const byteId = (char: string): number => gpt2ByteChars().indexOf(char);
  const digits = [...'12345'].map(byteId);

  it.each([
    // Whole run, then merges by rank: 12, 34 (ranked before "12 3"), 5.
    ['gpt-2', [262, 263, byteId('5')]],
    // Runs of at most three digits: "123" + "45".
    ['llama-bpe', [264, 265]],
    // llama.cpp default: digit runs cut into threes as well.
    ['default', [264, 265]],
    [undefined, [264, 265]],
    // One digit per piece.
    ['qwen2', digits],
    ['smollm', digits],
  ])('pre=%s tokenizes "12345" as llama.cpp splits it', (pre, expected) => {
    expect(tokenizerFromGguf(smallBpeGguf(pre)).encode('12345')).toEqual(expected);
  });

  it.each(SUPPORTED_PRE_TOKENIZERS.map((pre) => [pre]))('pre=%s loads and round-trips text', (pre) => {
    const tok = tokenizerFromGguf(smallBpeGguf(pre));
    for (const text of [...SAMPLES, "it's 1,234.5 $+<=>^~|` ok\r\n\n  end  "]) {
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
  });

  it('agrees with the equivalent Hugging Face tokenizer.json', () => {
    const hf = HfTokenizer.fromFiles({ tokenizerJson: smallBpeTokenizerJson() });
    const gguf = tokenizerFromGguf(smallBpeGguf('gpt-2'));
    for (const text of ['hello world', "hello hello, it's 12345!", '  héllo\n\nwörld  ', 'a<think>b']) {
      expect(gguf.encode(text)).toEqual(hf.encode(text));
    }
    expect(gguf.encode('hello world')).toEqual([259, 261, byteId('r'), byteId('l'), byteId('d')]);
  });

  it('keeps whole vocabulary words under llama3 (ignore_merges) only', () => {
    expect(tokenizerFromGguf(smallBpeGguf('llama-bpe')).encode('xyz')).toEqual([266]);
    expect(tokenizerFromGguf(smallBpeGguf('gpt-2')).encode('xyz')).toEqual([...'xyz'].map(byteId));
  });

  it('treats control tokens as special and user-defined tokens as text tokens', () => {
    const tok = tokenizerFromGguf(smallBpeGguf('gpt-2'));
    expect(tok.encode('<think>hello')).toEqual([268, 259]);
    expect(tok.encode('<|endoftext|>')).not.toContain(267);
    expect(tok.isSpecial(267)).toBe(true);
    expect(tok.isSpecial(268)).toBe(false);
    expect(tok.eosTokenIds).toEqual([267]);
  });

  it('adds BOS by default for llama3 only, and the GGUF flag overrides', () => {
    expect(tokenizerFromGguf(smallBpeGguf('llama-bpe')).addBosToken).toBe(true);
    expect(tokenizerFromGguf(smallBpeGguf('gpt-2')).addBosToken).toBe(false);
    const flagged = smallBpeGguf('llama-bpe', { 'tokenizer.ggml.add_bos_token': false });
    expect(tokenizerFromGguf(flagged).addBosToken).toBe(false);
  });
});

describe('GGUF SentencePiece vocabulary', () => {
  const tok = tokenizerFromGguf(smallSpmGguf());

  it('merges by score with a leading ▁ and BOS', () => {
    // "▁hello▁world": he, ll, ▁he, llo, ▁hello; ▁w, or, ▁wor, ld.
    expect(tok.encode('hello world')).toEqual([271, 274, 275]);
    // wo (-20) outranks ow (-21).
    expect(tok.encode('owo')).toEqual([259, 263, 276]);
    expect(tok.addBosToken).toBe(true);
    expect(tok.bosTokenId).toBe(1);
    expect(tok.eosTokenIds).toEqual([2]);
  });

  it('falls back to <0xNN> byte tokens for unknown characters', () => {
    expect(tok.encode('hé')).toEqual([259, 260, spmByteId(0xc3), spmByteId(0xa9)]);
    expect(tok.decode(tok.encode('hé'))).toBe('hé');
    expect(tok.encode('</s>')).toEqual([259, ...[...new TextEncoder().encode('</s>')].map(spmByteId)]);
  });

  it('decodes spaces and drops the prefix space', () => {
    expect(tok.decode([1, 271, 274, 275], { skipSpecialTokens: true })).toBe('hello world');
    expect(tok.decode([271, 274, 275])).toBe('hello world');
  });

  it('honours add_space_prefix = false', () => {
    const plain = tokenizerFromGguf(smallSpmGguf({ 'tokenizer.ggml.add_space_prefix': false }));
    expect(plain.encode('hello')).toEqual([267, 270]);
    expect(plain.decode([272, 273])).toBe(' wor');
  });

  it('works with typed score and type arrays', () => {
    const base = smallSpmGguf();
    const typed = tokenizerFromGguf({
      ...base,
      'tokenizer.ggml.scores': Float32Array.from(base['tokenizer.ggml.scores'] as number[]),
      'tokenizer.ggml.token_type': Int32Array.from(base['tokenizer.ggml.token_type'] as number[]),
    });
    expect(typed.encode('hello world')).toEqual([271, 274, 275]);
  });
});

describe('GGUF vocabulary errors', () => {
  it('rejects unsupported tokenizer models and pre-tokenizers by name', () => {
    expect(() => ggufVocabToTokenizerFiles({ ...smallSpmGguf(), 'tokenizer.ggml.model': 'bert' })).toThrow(ModelFormatError);
    expect(() => ggufVocabToTokenizerFiles({ ...smallSpmGguf(), 'tokenizer.ggml.model': 'bert' })).toThrow(/"bert" is not supported/);
    expect(() => ggufVocabToTokenizerFiles(smallBpeGguf('tekken'))).toThrow(/"tekken" is not supported \(supported: default, llama3/);
  });

  it('rejects malformed vocabularies', () => {
    expect(() => ggufVocabToTokenizerFiles({ 'tokenizer.ggml.model': 'gpt2' })).toThrow(/tokenizer\.ggml\.tokens/);
    const base = smallBpeGguf('gpt-2');
    const tokens = base['tokenizer.ggml.tokens'] as string[];
    expect(() => ggufVocabToTokenizerFiles({ ...base, 'tokenizer.ggml.tokens': [...tokens.slice(0, -1), 'he'] })).toThrow(/appears twice/);
    expect(() => ggufVocabToTokenizerFiles({ ...base, 'tokenizer.ggml.token_type': [1, 1] })).toThrow(/token_type/);
    expect(() => ggufVocabToTokenizerFiles({ ...base, 'tokenizer.ggml.merges': ['nospace'] })).toThrow(/merge 0/);
  });
});
