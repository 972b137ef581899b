// Output constraints on CpuRunner with XGrammar: the mask twin against its definition, the draft
// masks against plain decode's, and through the whole engine on a random-weight model at
// temperature 1: every reply that stops parses and validates, alone, in a cohort of 8, serialized
// and under speculation, token for token the same; a bad constraint fails only its own turn.
import { Validator, type Schema } from '@cfworker/json-schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { MASKED_LOGIT, fillRowBitmask, maskAllows, maskWords, type ConstraintMatcher } from '../engine/constraints';
import { mulberry32 } from '../engine/seeded-random';
import type { ModelDesc } from '../model/desc';
import type { StepRow } from '../engine/types';
import { CpuRunner } from './cpu-runner';
import { byteCompiler, randomByteModel, runConstrained, type ConstrainedReply, type ConstrainedTurn } from './testing/constrained-engine.node';
import { JSON_SCHEMAS } from './testing/json-schemas';
import { applyTokenMask } from './token-mask';

describe('applyTokenMask', () => {
  it('gives every token whose bit is clear MASKED_LOGIT and leaves the others bit for bit', () => {
    const vocab = 70; // three words, the last one partial
    const random = mulberry32(9);
    const logits = Float32Array.from({ length: vocab }, () => (random() - 0.5) * 8);
    const mask = Int32Array.from({ length: 2 * maskWords(vocab) }, () => (random() * 2 ** 32) | 0);
    for (const index of [0, 1]) {
      const out = logits.slice();
      applyTokenMask(out, mask, index);
      for (let id = 0; id < vocab; id++) expect(out[id]).toBe(maskAllows(mask, index * maskWords(vocab), id) ? logits[id] : Math.fround(MASKED_LOGIT));
    }
  });
});

const schemaTurns = (names: string[], seedOf: (name: string) => number): ConstrainedTurn[] =>
  names.map((name) => ({ prompt: `Reply with ${name} as JSON.`, constraint: { kind: 'json_schema', schema: JSON.stringify(JSON_SCHEMAS[name]) }, seed: seedOf(name) }));

/** A reply that stopped is JSON that validates against its schema. */
function expectValid(name: string, reply: ConstrainedReply): void {
  expect(reply.error, name).toBeUndefined();
  expect(reply.finishReason, `${name}: ${reply.text}`).toBe('eos');
  let parsed: unknown;
  expect(() => (parsed = JSON.parse(reply.text)), `${name}: ${reply.text}`).not.toThrow();
  const result = new Validator(JSON_SCHEMAS[name] as Schema, '2020-12').validate(parsed);
  expect(result.valid, `${name}: ${reply.text} ${JSON.stringify(result.errors)}`).toBe(true);
}

describe('constrained decoding through the engine on CpuRunner (random weights, XGrammar)', () => {
  let model: ModelDesc;
  const names = Object.keys(JSON_SCHEMAS);
  const seedOf = (name: string) => 500 + names.indexOf(name);
  const runner = (maxDraftTokens = 0) => new CpuRunner(model, { numBlocks: 512, maxDraftTokens });
  let alone: Map<string, ConstrainedReply>;

  beforeAll(async () => {
    model = randomByteModel();
    alone = new Map();
    for (const name of names) alone.set(name, (await runConstrained(runner(), schemaTurns([name], seedOf)))[0]!);
  }, 300_000);

  it(`every one of ${names.length} schemas: the reply alone at temperature 1 stops, parses and validates`, () => {
    expect(names.length).toBeGreaterThanOrEqual(20);
    for (const name of names) expectValid(name, alone.get(name)!);
    const unconstrained = new Set(names.map((name) => alone.get(name)!.text)).size;
    expect(unconstrained, 'the replies differ from schema to schema').toBeGreaterThan(names.length / 2);
  });

  it('in cohorts of 8: the same replies as alone; serialized and under speculation too', async () => {
    const cohorts = [names.slice(0, 8), names.slice(8, 16), [...names.slice(16), ...names.slice(0, 8 - (names.length - 16))]];
    let drafted = 0;
    for (const cohort of cohorts) {
      const together = await runConstrained(runner(), schemaTurns(cohort, seedOf));
      const serialized = await runConstrained(runner(), schemaTurns(cohort, seedOf), { mode: 'serialized' });
      const speculated = await runConstrained(runner(8), schemaTurns(cohort, seedOf), { speculation: { maxDraftTokens: 8 } });
      drafted += speculated.reduce((n, r) => n + r.numDrafted, 0);
      cohort.forEach((name, i) => {
        expectValid(name, together[i]!);
        expect(together[i]!.ids, name).toEqual(alone.get(name)!.ids);
        expect(serialized[i]!.ids, name).toEqual(alone.get(name)!.ids);
        expect(speculated[i]!.ids, name).toEqual(alone.get(name)!.ids);
      });
    }
    expect(drafted, 'speculation drafted tokens to verify under the masks').toBeGreaterThan(0);
  }, 300_000);

  it('a constrained row beside unconstrained ones: theirs are what they are alone, and a cut reply says length', async () => {
    const plain: ConstrainedTurn = { prompt: 'Say anything.', seed: 77 };
    const [plainAlone] = await runConstrained(runner(), [plain], { maxNewTokens: 30 });
    const mixed = await runConstrained(runner(), [plain, ...schemaTurns(['invoice'], seedOf)], { maxNewTokens: 30 });
    expect(mixed[0]!.ids).toEqual(plainAlone!.ids);
    const cut = await runConstrained(runner(), schemaTurns(['extraction'], seedOf), { maxNewTokens: 4 });
    expect(cut[0]).toMatchObject({ finishReason: 'length', ids: alone.get('extraction')!.ids.slice(0, 4) });
  }, 120_000);

  it('regex, EBNF and JSON mode constrain too; a constraint XGrammar refuses ends only its own turn, saying why', async () => {
    const replies = await runConstrained(runner(), [
      { prompt: 'a', constraint: { kind: 'regex', pattern: '[a-c]{3}-[0-9]{2}' } },
      { prompt: 'b', constraint: { kind: 'ebnf', grammar: 'root ::= "yes" | "no" | "maybe"' } },
      { prompt: 'c', constraint: { kind: 'json_schema', schema: '{"type": "nope"}' } },
      { prompt: 'd', constraint: { kind: 'ebnf', grammar: 'root ::= missing' } },
      { prompt: 'e', constraint: { kind: 'json_object' } },
    ]);
    expect(replies[0]!.text).toMatch(/^[a-c]{3}-[0-9]{2}$/);
    expect(['yes', 'no', 'maybe']).toContain(replies[1]!.text);
    expect(replies[2]).toMatchObject({ finishReason: 'error', error: expect.stringMatching(/^response_format: .*Unsupported type "nope"/) });
    expect(replies[3]).toMatchObject({ finishReason: 'error', error: expect.stringMatching(/^response_format: .*Rule "missing" is not defined/) });
    if (replies[4]!.finishReason === 'eos') expect(typeof JSON.parse(replies[4]!.text)).toBe('object');
    else expect(replies[4]!.finishReason).toBe('length');
  }, 120_000);
});

describe('fillRowBitmask', () => {
  it("gives each draft position plain decode's mask after the drafts before it, and leaves the matcher where it was", async () => {
    const compiled = await (await byteCompiler()).compile({ kind: 'json_schema', schema: JSON.stringify(JSON_SCHEMAS.person) });
    const text = '{"name":"ab","age":7}';
    const ids = Array.from(new TextEncoder().encode(text));
    const words = maskWords(259);
    const matcher: ConstraintMatcher = await compiled.newMatcher();
    const plain: Int32Array[] = [];
    const reference = await compiled.newMatcher();
    for (const id of ids) {
      plain.push(await reference.nextTokenBitmask());
      expect(reference.acceptToken(id)).toBe(true);
    }
    plain.push(await reference.nextTokenBitmask());
    expect(maskAllows(plain[ids.length]!, 0, 258), 'EOS once the object is complete').toBe(true);
    expect(maskAllows(plain[3]!, 0, 258), 'no EOS inside it').toBe(false);
    // known tokens up to 5, then drafts: 4 right, one the grammar forbids (EOS inside the object), 2 more
    for (let k = 0; k < 5; k++) expect(matcher.acceptToken(ids[k]!)).toBe(true);
    const drafts = [...ids.slice(5, 9), 258, 97, 34];
    const row: StepRow = { sessionId: 's', tokenIds: Int32Array.from([ids[4]!, ...drafts]), startPos: 0, blockTables: [new Int32Array(0)], sampling: { temperature: 1, topK: 0, topP: 1, seed: 1 }, sample: true, numDraftTokens: drafts.length };
    await fillRowBitmask(row, matcher, words);
    const rowMask = (j: number) => Array.from(row.tokenBitmask!.subarray(j * words, (j + 1) * words));
    for (let j = 0; j <= 4; j++) expect(rowMask(j), `position ${j}`).toEqual(Array.from(plain[5 + j]!));
    for (let j = 5; j <= drafts.length; j++) expect(rowMask(j)).toEqual(rowMask(4)); // past the forbidden draft: repeats
    expect(Array.from(await matcher.nextTokenBitmask())).toEqual(Array.from(plain[5]!));
  });
});
