// tool_choice 'auto' through the engine on CpuRunner: a random-weight model over Qwen3's vocabulary
// at temperature 1, pushed to open a call (a logit bias on the format's first token), writes calls
// that the library's parser reads and that validate against their tool's parameters: alone, beside
// unconstrained rows, batched, serialized and under speculation, the same tokens for the same seed.
import { Validator, type Schema } from '@cfworker/json-schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { CpuRunner } from '../reference/cpu-runner';
import { qwen3Vocab, randomQwen3VocabModel, runConstrained, type ConstrainedReply, type ConstrainedTurn } from '../reference/testing/constrained-engine.node';
import type { OutputConstraint, ToolDefinition } from '../protocol/api';
import { parseToolCalls } from './tool-calls';

// A random-weight model rarely closes an unbounded string: the city is bounded by a pattern.
const WEATHER: ToolDefinition = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', pattern: '^[A-Za-z]{1,12}$' }, unit: { enum: ['c', 'f'] }, days: { type: 'integer' } }, required: ['city', 'unit'] } },
};
const TIME: ToolDefinition = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { enum: ['utc', 'local'] } }, required: ['zone'] } } };
const TOOLS = [WEATHER, TIME];
const NAMES = new Set(TOOLS.map((t) => t.function.name));
const autoCalls = (parallel: boolean): OutputConstraint => ({ kind: 'tool_calls', tools: JSON.stringify(TOOLS), parallel });
const SEEDS = [1, 2, 3, 4];

/** The reply's calls, each checked against its tool's parameters. */
function expectValidCalls(reply: ConstrainedReply, maxCalls: number): number {
  expect(reply.error, reply.text).toBeUndefined();
  const { calls } = parseToolCalls(reply.text, NAMES, { maxCalls });
  expect(calls.length, reply.text).toBeGreaterThanOrEqual(1);
  for (const call of calls) {
    const tool = TOOLS.find((t) => t.function.name === call.function.name)!;
    const result = new Validator(tool.function.parameters as Schema, '2020-12').validate(JSON.parse(call.function.arguments));
    expect(result.valid, `${reply.text} ${JSON.stringify(result.errors)}`).toBe(true);
  }
  return calls.length;
}

describe("tool_choice 'auto' on a random-weight model (CpuRunner, Qwen3's vocabulary)", () => {
  const model = randomQwen3VocabModel();
  const runner = () => new CpuRunner(model, { numBlocks: 256 });
  const hermes = qwen3Vocab('hermes');
  const plain = qwen3Vocab('plain-json');
  const [TRIGGER] = hermes.tokenizer.encode('<tool_call>');
  const [JSON_OPEN] = plain.tokenizer.encode('{"');
  const pushed = (seed: number, bias: number, parallel = false): ConstrainedTurn => ({ prompt: 'What is the weather in Paris?', constraint: autoCalls(parallel), seed, sampling: { logitBias: { [bias]: 100 } } });
  const free = (seed: number): ConstrainedTurn => ({ prompt: 'Say anything.', seed, maxNewTokens: 16 });
  let alone: ConstrainedReply[];
  let freeAlone: ConstrainedReply[];

  beforeAll(async () => {
    alone = [];
    for (const seed of SEEDS) alone.push((await runConstrained(runner(), [pushed(seed, TRIGGER!)], { vocab: hermes, maxNewTokens: 200 }))[0]!);
    freeAlone = await runConstrained(runner(), [free(70), free(71)], { vocab: hermes });
  }, 300_000);

  it('<tool_call> is one token of the vocabulary, the trigger the bias pushes', () => {
    expect(hermes.tokenizer.encode('<tool_call>')).toEqual([151657]);
  });

  it('hermes: each reply opens a call, which parses and validates, and ends there (one call: parallel_tool_calls false)', () => {
    for (const reply of alone) {
      expect(reply.ids[0], reply.text).toBe(TRIGGER);
      expect(reply.finishReason, reply.text).toBe('eos');
      expect(expectValidCalls(reply, 1)).toBe(1);
      expect(reply.text).toMatch(/^<tool_call>\n\{"name": "get_(weather|time)", "arguments": [\s\S]*\}\n<\/tool_call>$/);
    }
    expect(new Set(alone.map((r) => r.text)).size, 'the calls differ from seed to seed').toBeGreaterThan(SEEDS.length / 2);
  });

  it('in a cohort with unconstrained rows, batched and serialized: every row gives the tokens it gives alone', async () => {
    const turns = [free(70), ...SEEDS.map((seed) => pushed(seed, TRIGGER!)), free(71)];
    for (const mode of ['batched', 'serialized'] as const) {
      const together = await runConstrained(runner(), turns, { vocab: hermes, maxNewTokens: 200, mode });
      SEEDS.forEach((_, i) => {
        expect(together[i + 1]!.ids, `${mode} seed ${SEEDS[i]}`).toEqual(alone[i]!.ids);
        expectValidCalls(together[i + 1]!, 1);
      });
      expect(together[0]!.ids).toEqual(freeAlone[0]!.ids);
      expect(together[turns.length - 1]!.ids).toEqual(freeAlone[1]!.ids);
    }
  }, 300_000);

  it('under speculation: drafts verified under the masks give the same tokens', async () => {
    const speculated = await runConstrained(new CpuRunner(model, { numBlocks: 256, maxDraftTokens: 8 }), SEEDS.slice(0, 2).map((seed) => pushed(seed, TRIGGER!)), { vocab: hermes, maxNewTokens: 200, speculation: { maxDraftTokens: 8 } });
    speculated.forEach((reply, i) => expect(reply.ids, `seed ${SEEDS[i]}`).toEqual(alone[i]!.ids));
    expect(speculated.reduce((n, r) => n + r.numDrafted, 0), 'drafts were verified').toBeGreaterThan(0);
  }, 300_000);

  it('hermes with parallel calls: pushed again after each call, every complete call validates', async () => {
    const [reply] = await runConstrained(runner(), [pushed(9, TRIGGER!, true)], { vocab: hermes, maxNewTokens: 160 });
    expect(expectValidCalls(reply!, Infinity)).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('the plain rendering\'s JSON: a reply pushed to open with {" is one call that parses and validates', async () => {
    const replies = await runConstrained(runner(), SEEDS.slice(0, 2).map((seed) => pushed(seed, JSON_OPEN!)), { vocab: plain, maxNewTokens: 200 });
    for (const reply of replies) {
      expect(reply.finishReason, reply.text).toBe('eos');
      expect(expectValidCalls(reply, 1)).toBe(1);
      expect(parseToolCalls(reply.text, NAMES).content, 'nothing but the call').toBeNull();
    }
  }, 120_000);
});
