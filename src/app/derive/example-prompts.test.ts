// Tests for the example prompts: each is a NIAH prompt of about its stated length that hides
// its code and ends with the protocol's question; the seed changes the code.
import { describe, expect, it } from 'vitest';
import { NIAH_QUESTION } from '../../protocol/niah';
import { buildExample, EXAMPLE_PROMPTS, isEmbeddedModel } from './example-prompts';

describe('example prompts', () => {
  it('hides a code in a haystack of about the stated length', () => {
    for (const example of EXAMPLE_PROMPTS) {
      const { prompt, code } = buildExample(example, 1);
      expect(prompt).toContain(`IMPORTANT: the secret code is ${code}.`);
      expect(prompt.endsWith(NIAH_QUESTION)).toBe(true);
      expect(prompt.length).toBeGreaterThan(example.tokens * 0.6);
      expect(prompt.length).toBeLessThan(example.tokens * 1.1);
    }
    const codes = new Set([1, 2, 3, 4].map((seed) => buildExample(EXAMPLE_PROMPTS[0], seed).code));
    expect(codes.size).toBeGreaterThan(1);
  });

  it('knows the embedded model by name', () => {
    expect(isEmbeddedModel('cohort-tiny')).toBe(true);
    expect(isEmbeddedModel('cohort-tiny-q8_0')).toBe(true);
    expect(isEmbeddedModel('SmolLM2-135M')).toBe(false);
    expect(isEmbeddedModel(undefined)).toBe(false);
  });
});
