// Tests for the NIAH preset plan: distinct needles, spread lengths, staggered sends, greedy
// settings, the pass/leak verdict, recall, and prompt summaries.
import { describe, expect, it } from 'vitest';
import { NIAH_QUESTION } from '../../protocol/niah';
import { judgeNiah, NIAH_SETTINGS, planNiah, recallOf, summarizePrompt } from './niah-plan';

describe('planNiah', () => {
  it('gives each session its own needle, length and start time, greedy with 24 new tokens', () => {
    const plan = planNiah(8, 42, 1200, 300);
    expect(plan.items).toHaveLength(8);
    expect(new Set(plan.allCodes).size).toBe(8);
    expect(plan.items.map((i) => i.delayMs)).toEqual([0, 300, 600, 900, 1200, 1500, 1800, 2100]);
    const lengths = plan.items.map((i) => i.numLines);
    // From about 600 to about 1200 prompt tokens (81 tokens a line, 110 around them).
    expect(Math.min(...lengths)).toBe(Math.floor((600 - 110) / 81));
    expect(Math.max(...lengths)).toBe(Math.floor((1200 - 110) / 81));
    for (const item of plan.items) {
      expect(item.prompt).toContain(`IMPORTANT: the secret code is ${item.code}.`);
      expect(item.prompt.endsWith(NIAH_QUESTION)).toBe(true);
    }
    expect(NIAH_SETTINGS).toMatchObject({ temperature: 0, maxNewTokens: 24 });
  });

  it('takes speculation from its caller and nothing else: the protocol stays greedy', () => {
    expect(planNiah(2, 1, 800, 100).settings).toEqual(NIAH_SETTINGS);
    expect(planNiah(2, 1, 800, 100, 'off').settings).toEqual({ ...NIAH_SETTINGS, speculation: 'off' });
    expect(planNiah(2, 1, 800, 100, { maxDraftTokens: 6 }).settings).toEqual({ ...NIAH_SETTINGS, speculation: { maxDraftTokens: 6 } });
  });

  it('is reproducible from its seed and differs between seeds', () => {
    expect(planNiah(4, 1, 800, 100).allCodes).toEqual(planNiah(4, 1, 800, 100).allCodes);
    expect(planNiah(4, 1, 800, 100).allCodes).not.toEqual(planNiah(4, 2, 800, 100).allCodes);
  });

  it('refuses zero sessions', () => {
    expect(() => planNiah(0, 1, 800, 100)).toThrow(/at least one/);
  });
});

describe('judgeNiah and recallOf', () => {
  const mark = { code: 'OAK-1234', numLines: 10, allCodes: ['OAK-1234', 'PINE-5678'] };

  it('passes on the own code and fails on a missing or leaked one', () => {
    expect(judgeNiah(mark, ' The secret code is OAK-1234.')).toMatchObject({ passed: true, leaks: [] });
    expect(judgeNiah(mark, 'OAK-123')).toMatchObject({ passed: false, leaks: [] });
    expect(judgeNiah(mark, 'OAK-1234 or PINE-5678')).toMatchObject({ passed: false, leaks: ['PINE-5678'] });
  });

  it('reports recall only once every session is judged', () => {
    const pass = judgeNiah(mark, 'OAK-1234');
    const fail = judgeNiah(mark, 'nothing');
    expect(recallOf([pass, mark])).toEqual({ numPassed: 1, numJudged: 1, numSessions: 2, recall: null });
    expect(recallOf([pass, fail]).recall).toBe(0.5);
    expect(recallOf([pass, pass]).recall).toBe(1);
    expect(recallOf([]).recall).toBeNull();
  });
});

describe('summarizePrompt', () => {
  it('keeps short prompts and shortens long ones to head and tail', () => {
    expect(summarizePrompt('a\nb')).toBe('a\nb');
    const long = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    expect(summarizePrompt(long, 4)).toBe('line 0\nline 1\n… 16 more lines …\nline 18\nline 19');
  });
});
