// The Extract x N preset's plan (greedy, the kind's schema as response format) and its tally.
import { describe, expect, it } from 'vitest';
import { extractSchemaText } from '../../protocol/extract';
import { judgeExtract, planExtract, tallyExtract } from './extract-plan';
import { toSessionOptions } from './session-settings';

describe('Extract x N', () => {
  it('plans n greedy sessions that all answer in the kind\'s schema', () => {
    const plan = planExtract(4, 9, 'product', 'off');
    expect(plan.items).toHaveLength(4);
    expect(plan.settings).toMatchObject({ temperature: 0, responseFormat: 'json_schema', jsonSchema: extractSchemaText('product'), speculation: 'off' });
    expect(toSessionOptions(plan.settings).sampling?.constraint).toEqual({ kind: 'json_schema', schema: JSON.stringify(JSON.parse(extractSchemaText('product'))) });
    expect(new Set(plan.items.map((i) => i.prompt)).size).toBe(4);
    expect(plan.items.every((i) => i.mark.kind === 'product' && i.mark.verdict === undefined)).toBe(true);
  });

  it('tallies the judged replies only', () => {
    const { items } = planExtract(3, 2, 'person');
    const [a, b, c] = items.map((i) => i.mark);
    const marks = [judgeExtract(a!, JSON.stringify(a!.expected)), judgeExtract(b!, 'not json'), c!];
    expect(tallyExtract(marks)).toEqual({ numSessions: 3, numJudged: 2, numParsed: 1, numMatchSchema: 1, numCorrect: 5, numFields: 10 });
  });
});
