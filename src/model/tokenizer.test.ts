// Tests of HfTokenizer on the default model's byte-level tokenizer files and on a GPT-2 style
// BPE with merges. Chat encoding, streaming and GGUF conversion have their own test files.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ModelFormatError } from './errors';
import { HfTokenizer } from './tokenizer';
import { byteLevelFiles, gpt2ByteChars, readFixture, smallBpeTokenizerJson } from './testing/tokenizer-fixtures';

const PYTHON = '/usr/bin/python3';
const REPO_ROOT = new URL('../../', import.meta.url).pathname;

function byteLevel(): HfTokenizer {
  return HfTokenizer.fromFiles(byteLevelFiles());
}

function utf8(text: string): number[] {
  return Array.from(new TextEncoder().encode(text));
}

describe('HfTokenizer on the default byte-level vocabulary', () => {
  it('encodes text as its UTF-8 bytes', () => {
    const tok = byteLevel();
    expect(tok.encode('Hi é')).toEqual([72, 105, 32, 195, 169]);
    expect(tok.encode('Note 0042: MAPLE-7890.')).toEqual(utf8('Note 0042: MAPLE-7890.'));
    expect(tok.encode('')).toEqual([]);
  });

  it('keeps special-token strings in plain text as bytes', () => {
    const tok = byteLevel();
    expect(tok.encode('<|im_end|>')).toEqual(utf8('<|im_end|>'));
    expect(tok.encode('a<|im_start|>system')).toEqual(utf8('a<|im_start|>system'));
    // The library itself would have matched the special token: the guard is ours.
    expect(tok.encodeRecognizingSpecials('a<|im_end|>b')).toEqual([97, 258, 98]);
  });

  it('decodes back to the same text, specials included or skipped', () => {
    const tok = byteLevel();
    for (const text of ['Hi é', 'naïve café 😀 中文', '  spaces  and\ttabs\n', 'a .b ,c']) {
      expect(tok.decode(tok.encode(text))).toBe(text);
    }
    expect(tok.decode([257, 72, 105, 258])).toBe('<|im_start|>Hi<|im_end|>');
    expect(tok.decode([257, 72, 105, 258], { skipSpecialTokens: true })).toBe('Hi');
    expect(tok.decode(new Int32Array([72, 105]))).toBe('Hi');
    expect(tok.decode([])).toBe('');
  });

  it('reads ids and flags from tokenizer_config.json and generation_config.json', () => {
    const files = byteLevelFiles();
    const tok = HfTokenizer.fromFiles(files);
    // <|im_end|> from the config, and <|endoftext|>, an end-of-turn text llama.cpp ends on too.
    expect(tok.eosTokenIds).toEqual([256, 258]);
    expect(tok.bosTokenId).toBe(256);
    expect(tok.addBosToken).toBe(false);
    expect(tok.vocabSize).toBe(259);
    expect(tok.isSpecial(257)).toBe(true);
    expect(tok.isSpecial(65)).toBe(false);
    const withGeneration = HfTokenizer.fromFiles({ ...files, generationConfig: { eos_token_id: [256, 258] } });
    expect(withGeneration.eosTokenIds).toEqual([256, 258]);
    const asText = HfTokenizer.fromFiles({
      tokenizerJson: JSON.stringify(files.tokenizerJson),
      tokenizerConfig: JSON.stringify({ ...files.tokenizerConfig, add_bos_token: true }),
      generationConfig: '{"eos_token_id": 256}',
    });
    expect(asText.eosTokenIds).toEqual([256, 258]);
    expect(asText.addBosToken).toBe(true);
  });

  it('names the file when JSON is broken', () => {
    expect(() => HfTokenizer.fromFiles({ tokenizerJson: '{not json' })).toThrow(ModelFormatError);
    expect(() => HfTokenizer.fromFiles({ tokenizerJson: '{not json' })).toThrow(/tokenizer\.json/);
    expect(() => HfTokenizer.fromFiles({ tokenizerJson: '[]' })).toThrow(/tokenizer\.json/);
  });

  it.skipIf(!existsSync(PYTHON))('fixture matches tools/train/vocab.py', () => {
    const script =
      "import sys,json; sys.path.insert(0,'tools/train'); import vocab; " +
      'print(json.dumps([vocab.tokenizer_json(), vocab.tokenizer_config_json(2048)]))';
    const run = spawnSync(PYTHON, ['-c', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const [tokenizerJson, tokenizerConfig] = JSON.parse(run.stdout) as [unknown, unknown];
    expect(JSON.parse(readFixture('byte-level/tokenizer.json'))).toEqual(tokenizerJson);
    expect(JSON.parse(readFixture('byte-level/tokenizer_config.json'))).toEqual(tokenizerConfig);
  });
});

describe('HfTokenizer on a GPT-2 style BPE with merges', () => {
  const tok = HfTokenizer.fromFiles({ tokenizerJson: smallBpeTokenizerJson() });
  const byteId = (char: string): number => gpt2ByteChars().indexOf(char);

  it('applies merges within pre-tokenized words', () => {
    // "hello" merges fully; " world" -> Ġwo + r l d.
    expect(tok.encode('hello world')).toEqual([259, 261, byteId('r'), byteId('l'), byteId('d')]);
    // Merges never cross the regex split between "hello" and " hello".
    expect(tok.encode('hello hello')).toEqual([259, byteId('Ġ'), 259]);
    expect(tok.decode(tok.encode('hello world'))).toBe('hello world');
  });

  it('follows merge ranks: 1 2, then 3 4 before 12 3', () => {
    expect(tok.encode('12345')).toEqual([262, 263, byteId('5')]);
  });

  it('recognizes non-special added tokens in text, but not special ones', () => {
    expect(tok.encode('a<think>b')).toEqual([byteId('a'), 268, byteId('b')]);
    expect(tok.encode('<|endoftext|>')).toEqual(tok.encode('<|endoftext').concat(tok.encode('|>')));
    expect(tok.encode('<|endoftext|>')).not.toContain(267);
  });

  it('agrees with the library wherever the text holds no special token', () => {
    for (const text of ['hello world', "it's 12345 o'clock\n\n  x", 'a<think>b hello', 'héllo wörld']) {
      expect(tok.encode(text)).toEqual(tok.encodeRecognizingSpecials(text));
    }
  });
});
