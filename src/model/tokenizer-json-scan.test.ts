// The raw-bytes entry count of tokenizer.json: it counts what JSON.parse would build, names the
// table it refuses and where it stopped, and lets real tokenizers through at the real limit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ModelFormatError } from './errors';
import { largeBpeTokenizerJson } from './testing/large-tokenizer';
import { readFixture, smallBpeTokenizerJson } from './testing/tokenizer-fixtures';
import { checkTokenizerJsonEntries, MAX_TOKENIZER_JSON_NESTING } from './tokenizer-json-scan';
import { MAX_VOCAB_ENTRIES } from './vocab-limits';
import { makeRandom } from '../engine/testing/test-support';

const enc = (text: string) => new TextEncoder().encode(text);
const scan = (text: string, limit?: number) => checkTokenizerJsonEntries('tokenizer.json', enc(text), limit);
const refusal = (text: string, limit?: number): ModelFormatError => {
  try {
    scan(text, limit);
  } catch (e) {
    if (e instanceof ModelFormatError) return e;
    throw e;
  }
  throw new Error('not refused');
};

/** A random JSON value whose strings are full of the bytes the scan must not take for structure. */
function randomValue(random: ReturnType<typeof makeRandom>, depth: number): unknown {
  const text = () => Array.from({ length: random.int(0, 6) }, () => random.pick(['"', '\\', '[', ']', '{', '}', ',', ':', ' ', 'é', '\u0000', '\n', 'a', '\\"'])).join('');
  const kind = depth >= 6 ? random.int(0, 2) : random.int(0, 4);
  if (kind === 0) return text();
  if (kind === 1) return random.pick([0, -1.5e-7, 123456, true, false, null]);
  if (kind === 2) return random.next() < 0.5 ? [] : {};
  const count = random.int(0, 7);
  if (kind === 3) return Array.from({ length: count }, () => randomValue(random, depth + 1));
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${text()}${i}`, randomValue(random, depth + 1)]));
}

/** The most entries any array or object in `value` has, as JSON.parse built it. */
function largestTable(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Object.values(value as object);
  return Math.max(children.length, ...children.map(largestTable));
}

describe('the tokenizer.json entry count', () => {
  it('counts exactly what JSON.parse builds (600 random documents with structure inside strings)', () => {
    for (let seed = 1; seed <= 600; seed++) {
      const random = makeRandom(seed);
      const value = { model: randomValue(random, 0), added_tokens: randomValue(random, 1) };
      const text = JSON.stringify(value, null, random.next() < 0.5 ? 0 : 2);
      const largest = largestTable(JSON.parse(text));
      expect(() => scan(text, largest), `seed ${seed}`).not.toThrow();
      expect(() => scan(text, largest - 1), `seed ${seed}`).toThrow(ModelFormatError);
    }
  });

  it('names the table it refuses and the byte where the first entry past the limit starts', () => {
    const vocab = '{"model":{"type":"BPE","vocab":{"a":0,"b":1,"c":2}}}';
    expect(refusal(vocab, 2)).toEqual(new ModelFormatError('tokenizer.json', `the vocabulary (model.vocab) has more than 2 entries, past the limit (counted up to byte ${vocab.indexOf('"c"')} of ${vocab.length})`));
    expect(refusal('{"model":{"merges":[["a","b"],["a","c"],["b","c"]]}}', 2).problem).toMatch(/^model\.merges has more than 2 entries/);
    expect(refusal('{"added_tokens":[{"id":0},{"id":1},{"id":2}]}', 2).problem).toMatch(/^added_tokens has more than 2 entries/);
    expect(refusal('{"post_processor":{"processors":[{},{"ids":[1,2,3]}]}}', 2).problem).toMatch(/^post_processor\.processors\[1\]\.ids has more than 2 entries/);
    expect(refusal('{"a":1,"b":2,"c":3}', 2).problem).toMatch(/^the top-level value has more than 2 entries/);
  });

  it('reads keys as JSON.parse does: an escaped "model" is still the model', () => {
    expect(refusal('{"mod\\u0065l":{"voc\\u0061b":["x","y","z"]}}', 2).problem).toMatch(/^the vocabulary \(model\.vocab\) has more than 2 entries/);
  });

  it(`refuses nesting past ${MAX_TOKENIZER_JSON_NESTING} levels and keeps that depth`, () => {
    const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    expect(() => scan(nested(MAX_TOKENIZER_JSON_NESTING))).not.toThrow();
    expect(refusal(nested(MAX_TOKENIZER_JSON_NESTING + 1))).toEqual(
      new ModelFormatError('tokenizer.json', `nests deeper than ${MAX_TOKENIZER_JSON_NESTING} levels (at byte ${MAX_TOKENIZER_JSON_NESTING}); no tokenizer does`),
    );
  });

  it('leaves malformed JSON to JSON.parse', () => {
    for (const text of ['', ']]]}}{"a', '"abc', '{"a":[1,2', '{"a\\', ',,,', '{"a":"\\\\"}]]']) expect(() => scan(text), text).not.toThrow();
  });

  it(`holds the vocabulary at exactly ${MAX_VOCAB_ENTRIES} entries`, () => {
    expect(() => checkTokenizerJsonEntries('tokenizer.json', largeBpeTokenizerJson({ vocabEntries: MAX_VOCAB_ENTRIES, merges: 0 }))).not.toThrow();
    expect(() => checkTokenizerJsonEntries('tokenizer.json', largeBpeTokenizerJson({ vocabEntries: MAX_VOCAB_ENTRIES + 1, merges: 0 }))).toThrow(
      `the vocabulary (model.vocab) has more than ${MAX_VOCAB_ENTRIES} entries`,
    );
  });

  it('lets real tokenizers through: the embedded one, the test vocabularies and a Gemma 3-sized file', () => {
    const embedded = readFileSync(new URL('../../public/models/cohort-tiny/tokenizer.json', import.meta.url));
    const gemmaSized = largeBpeTokenizerJson({ vocabEntries: 262_144, merges: 514_906 });
    for (const bytes of [embedded, enc(readFixture('byte-level/tokenizer.json')), enc(JSON.stringify(smallBpeTokenizerJson(), null, 2)), gemmaSized]) {
      expect(() => checkTokenizerJsonEntries('tokenizer.json', bytes)).not.toThrow();
    }
  });
});
