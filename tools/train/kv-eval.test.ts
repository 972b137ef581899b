// Scoring of the per-KV-type NIAH eval: recall, leaks, agreement with the baseline and the
// reference tokens, length bands and the Markdown row; synthetic outputs, no engine.
import { describe, expect, it } from 'vitest';
import { commonPrefixLength, kvEvalMarkdown, scoreKvType, type KvEvalOutput } from './kv-eval';

const out = (code: string, promptTokens: number, ids: number[], text: string, ref = ids): KvEvalOutput => ({ code, promptTokens, outputTokenIds: ids, text, referenceTokenIds: ref });

describe('commonPrefixLength', () => {
  it('counts equal leading tokens', () => {
    expect(commonPrefixLength([1, 2, 3], [1, 2, 4])).toBe(2);
    expect(commonPrefixLength([1, 2], [1, 2, 3])).toBe(2);
    expect(commonPrefixLength([], [1])).toBe(0);
  });
});

describe('scoreKvType', () => {
  const baseline = [
    out('ALPHA-1000', 400, [1, 2, 3, 9], 'ALPHA-1000'),
    out('BETA-2000', 1200, [4, 5, 9], 'BETA-2000'),
    out('GAMMA-3000', 1900, [6, 7, 9], 'GAMMA-3000'),
  ];

  it('gives the baseline against itself full agreement', () => {
    const s = scoreKvType('f32', baseline, baseline, 2);
    expect(s).toMatchObject({ n: 3, recall: 1, leaks: 0, sameAsBaseline: 1, tokenAgreement: 1, sameAsReference: 1, minPromptTokens: 400, maxPromptTokens: 1900, seconds: 2 });
    expect(s.bands).toEqual([
      { label: '<= 1,000', n: 1, recall: 1 },
      { label: '1,001-1,500', n: 1, recall: 1 },
      { label: '> 1,500', n: 1, recall: 1 },
    ]);
  });

  it('counts a miss, a leak and tokens that diverge', () => {
    const other = [
      out('ALPHA-1000', 400, [1, 2, 8, 9], 'ALPHA-1001', [1, 2, 3, 9]), // diverges at token 2: a miss
      out('BETA-2000', 1200, [4, 5, 9], 'BETA-2000'),
      out('GAMMA-3000', 1900, [6, 7, 9], 'GAMMA-3000 BETA-2000'), // another prompt's code
    ];
    const s = scoreKvType('q8_0', other, baseline, 1);
    expect(s.recall).toBeCloseTo(2 / 3);
    expect(s.leaks).toBe(1);
    expect(s.sameAsBaseline).toBeCloseTo(2 / 3);
    expect(s.tokenAgreement).toBeCloseTo((2 + 3 + 3) / 10);
    expect(s.sameAsReference).toBeCloseTo(2 / 3);
    expect(s.bands[0]).toEqual({ label: '<= 1,000', n: 1, recall: 0 });
  });

  it('leaves an empty band without a recall', () => {
    const s = scoreKvType('f16', baseline.slice(0, 1), baseline.slice(0, 1), 0);
    expect(s.bands.map((b) => b.recall)).toEqual([1, null, null]);
  });

  it('rejects outputs that do not pair with the baseline', () => {
    expect(() => scoreKvType('f16', baseline.slice(0, 2), baseline, 0)).toThrow(RangeError);
    expect(() => scoreKvType('f16', [], [], 0)).toThrow(RangeError);
  });
});

describe('kvEvalMarkdown', () => {
  it('writes one row per type under the heading and note', () => {
    const base = [out('ALPHA-1000', 400, [1, 9], 'ALPHA-1000')];
    const md = kvEvalMarkdown([scoreKvType('f32', base, base, 3), scoreKvType('q8_0', base, base, 4)], 'KV eval', 'a note');
    const lines = md.split('\n');
    expect(lines[0]).toBe('# KV eval');
    expect(lines[2]).toBe('a note');
    expect(lines[4]).toContain('same tokens as f32');
    expect(lines[6]).toBe('| f32 | 1 | 400-400 | 1.000 | 1.000 (1) | - | - | 0 | 1.000 | 1.000 | 1.000 | 3 |');
    expect(lines[7]).toMatch(/^\| q8_0 \| 1 \|/);
  });
});
