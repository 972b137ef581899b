// The extraction task: seeded documents that state their record, the schema, and the verdict.
import { describe, expect, it } from 'vitest';
import { extractSchema, judgeExtraction, makeExtractSuite } from './extract';

describe('extraction documents', () => {
  it('are the same for the same seed, and each states every field of its record', () => {
    for (const kind of ['person', 'product'] as const) {
      const suite = makeExtractSuite(11, 8, kind);
      expect(makeExtractSuite(11, 8, kind)).toEqual(suite);
      expect(makeExtractSuite(12, 8, kind)).not.toEqual(suite);
      expect(new Set(suite.map((c) => Object.values(c.expected)[0])).size).toBe(8);
      for (const c of suite) {
        expect(c.kind).toBe(kind);
        expect(Object.keys(c.expected)).toEqual(extractSchema(kind).required);
        for (const value of Object.values(c.expected)) expect(c.prompt).toContain(String(value));
      }
    }
  });

  it('the schema requires every field and allows no other', () => {
    expect(extractSchema('person')).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' }, city: { type: 'string' }, occupation: { type: 'string' }, email: { type: 'string' } },
      required: ['name', 'age', 'city', 'occupation', 'email'],
      additionalProperties: false,
    });
  });

  it('judges a reply: JSON or not, following the schema or not, fields as the document states them', () => {
    const [c] = makeExtractSuite(3, 1, 'person');
    const e = c!.expected;
    expect(judgeExtraction('person', JSON.stringify(e), e)).toEqual({ parsed: true, matchesSchema: true, numCorrect: 5, numFields: 5 });
    expect(judgeExtraction('person', JSON.stringify({ ...e, name: ` ${String(e.name).toUpperCase()} `, city: 'Nowhere' }), e)).toEqual({ parsed: true, matchesSchema: true, numCorrect: 4, numFields: 5 });
    expect(judgeExtraction('person', JSON.stringify({ ...e, age: String(e.age) }), e)).toMatchObject({ matchesSchema: false, numCorrect: 4 });
    expect(judgeExtraction('person', JSON.stringify({ ...e, extra: 1 }), e)).toMatchObject({ matchesSchema: false, numCorrect: 5 });
    expect(judgeExtraction('person', '[1]', e)).toEqual({ parsed: true, matchesSchema: false, numCorrect: 0, numFields: 5 });
    expect(judgeExtraction('person', '{"name": ', e)).toEqual({ parsed: false, matchesSchema: false, numCorrect: 0, numFields: 5 });
  });

  it('refuses an empty suite', () => {
    expect(() => makeExtractSuite(1, 0, 'person')).toThrow(/at least one document/);
  });
});
