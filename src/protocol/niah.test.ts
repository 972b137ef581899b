// Tests for the NIAH prompt generator: format of DESIGN.md, reproducibility, spread.
// Not a recall test (that runs the model in e2e/niah.spec.ts).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeNiahSuite, niahLeaks, niahPassed, niahPrompt } from './niah';

describe('niah', () => {
  it('builds the DESIGN.md prompt with blank lines around the needle', () => {
    const p = niahPrompt(2, 1, 'MAPLE-7890');
    expect(p).toBe(
      'Note 0000: this paragraph is unrelated padding and does not contain the answer.\n' +
        '\nIMPORTANT: the secret code is MAPLE-7890.\n\n' +
        'Note 0001: this paragraph is unrelated padding and does not contain the answer.\n\n' +
        'Question: what is the secret code? Answer:',
    );
  });

  it('is reproducible from its seed and spreads lengths, depths and codes', () => {
    const a = makeNiahSuite(7, 8, 600, 1900);
    expect(makeNiahSuite(7, 8, 600, 1900)).toEqual(a);
    expect(makeNiahSuite(8, 8, 600, 1900)).not.toEqual(a);
    expect(new Set(a.map((c) => c.code)).size).toBe(8);
    const bytes = a.map((c) => new TextEncoder().encode(c.prompt).length);
    expect(Math.min(...bytes)).toBeGreaterThan(400);
    expect(Math.max(...bytes)).toBeLessThan(1900);
    expect(a.some((c) => c.needleLine === 0)).toBe(true);
    expect(a.some((c) => c.needleLine === c.numLines)).toBe(true);
  });

  it('builds the recorded suite from seed 7 (the page and the bench must keep sending these prompts)', () => {
    const suite = makeNiahSuite(7, 8, 600, 1900);
    expect(suite.map((c) => [c.code, c.numLines, c.needleLine])).toEqual([
      ['DELTA-5979', 6, 3], ['ORCHID-3320', 8, 7], ['GAMMA-7876', 10, 1], ['THETA-2774', 12, 3],
      ['ZETA-3639', 15, 6], ['IOTA-3666', 17, 12], ['BIRCH-3227', 19, 19], ['OAK-2717', 22, 0],
    ]);
    const hash = createHash('sha256');
    for (const c of suite) hash.update(c.prompt + '\0');
    expect(hash.digest('hex')).toBe('13f61d7201e033195e239000288e8f6511e60f16f8541bbc3315ca7670312b66');
  });

  it('judges pass and leaks by exact code', () => {
    expect(niahPassed('OAK-1234<|im_end|>', 'OAK-1234')).toBe(true);
    expect(niahPassed('OAK-1235', 'OAK-1234')).toBe(false);
    expect(niahLeaks('PINE-1111', 'OAK-1234', ['OAK-1234', 'PINE-1111'])).toEqual(['PINE-1111']);
  });
});
