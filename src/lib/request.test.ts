// planRequest: messages into system prompt, history and the user message; stop, token limit and
// per-choice seeds; refusals with the field named. Pure, no engine.
import { describe, expect, it } from 'vitest';
import { choiceSeed, planRequest } from './request';
import type { ChatCompletionCreateParams } from './types';
import { refusedParam } from './testing/plan-refusal';

const plan = (request: Partial<ChatCompletionCreateParams>) => planRequest({ messages: [{ role: 'user', content: 'hi' }], ...request } as ChatCompletionCreateParams);

const refusal = (request: Partial<ChatCompletionCreateParams>): string | null => refusedParam(request, [{ role: 'user', content: 'hi' }]);

describe('planRequest', () => {
  it("reads nulls as defaults: greedy, the engine's length default (up to the context), one choice", () => {
    const p = plan({ temperature: null, max_tokens: null, n: null, stop: null, seed: null });
    expect(p.sessions).toEqual([{ history: [], sampling: {} }]);
    expect(p).toMatchObject({ turn: 'hi', stream: false, includeUsage: false });
  });

  it('prefers max_completion_tokens, takes one stop string as a list', () => {
    expect(plan({ max_tokens: 5, max_completion_tokens: 7, stop: 'END' }).sessions[0]).toMatchObject({ maxNewTokens: 7, stopStrings: ['END'] });
  });

  it('joins leading system messages and keeps the turns between them and the last user message', () => {
    const p = plan({ messages: [{ role: 'system', content: 'a' }, { role: 'developer', content: 'b' }, { role: 'user', content: 'q1' }, { role: 'assistant', content: null }, { role: 'user', content: 'q2' }] });
    expect(p.sessions[0]).toMatchObject({ systemPrompt: 'a\n\nb', history: [{ role: 'user', content: 'q1' }, { role: 'assistant', content: '' }] });
    expect(p.turn).toBe('q2');
  });

  it("maps response_format to the engine's constraint: text none, JSON mode, a schema as JSON text, Cohort's grammar and regex", () => {
    const constraint = (response_format: unknown) => plan({ response_format: response_format as never }).sessions[0]!.sampling!.constraint;
    expect(constraint({ type: 'text' })).toBeUndefined();
    expect(constraint(null)).toBeUndefined();
    expect(constraint({ type: 'json_object' })).toEqual({ kind: 'json_object' });
    const schema = { type: 'object', properties: { a: { type: 'integer' } } };
    expect(constraint({ type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } })).toEqual({ kind: 'json_schema', schema: JSON.stringify(schema) });
    expect(constraint({ type: 'json_schema', json_schema: { name: 'any' } })).toEqual({ kind: 'json_object' });
    expect(constraint({ type: 'grammar', grammar: 'root ::= "a"' })).toEqual({ kind: 'ebnf', grammar: 'root ::= "a"' });
    expect(constraint({ type: 'regex', pattern: '[0-9]+' })).toEqual({ kind: 'regex', pattern: '[0-9]+' });
  });

  it('refuses what it cannot serve, naming the field', () => {
    expect(refusal({ messages: [] })).toBe('messages');
    expect(refusal({ messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] })).toBe('messages[1].role');
    expect(refusal({ messages: [{ role: 'user', content: 'q' }, { role: 'system', content: 's' }, { role: 'user', content: 'q' }] })).toBe('messages[1].role');
    expect(refusal({ messages: [{ role: 'user', content: [{ type: 'image_url' }] }] })).toBe('messages[0].content[0]');
    expect(refusal({ n: 129 })).toBe('n');
    expect(refusal({ logprobs: 'yes' as never })).toBe('logprobs');
    expect(refusal({ top_logprobs: 3 })).toBe('top_logprobs'); // without logprobs: true, as OpenAI
    expect(refusal({ logprobs: true, top_logprobs: 21 })).toBe('top_logprobs');
    expect(refusal({ logprobs: true, top_logprobs: 1.5 })).toBe('top_logprobs');
    expect(refusal({ logit_bias: [1, 2] as never })).toBe('logit_bias');
    expect(refusal({ logit_bias: 'x' as never })).toBe('logit_bias');
    for (const bad of ['json', { type: 'yaml' }, { type: 'json_schema' }, { type: 'json_schema', json_schema: { schema: {} } }, { type: 'json_schema', json_schema: { name: 'a b' } }, { type: 'json_schema', json_schema: { name: 'x', schema: [] } }, { type: 'json_schema', json_schema: { name: 'x', strict: 'yes' } }, { type: 'grammar', grammar: '' }, { type: 'regex' }]) {
      expect(refusal({ response_format: bad as never }), JSON.stringify(bad)).toBe('response_format');
    }
    expect(plan({ logprobs: false, presence_penalty: 0, tools: [], response_format: { type: 'text' } }).sessions).toHaveLength(1);
  });

  it("takes penalties, logit_bias and logprobs in OpenAI's shape as the engine's sampling", () => {
    const p = plan({ frequency_penalty: 0.5, presence_penalty: -1, repetition_penalty: 1.1, logit_bias: { '50256': -100, '11': 2 }, logprobs: true, top_logprobs: 5, n: 2 });
    expect(p.logprobs).toBe(true);
    for (const s of p.sessions) expect(s.sampling).toEqual({ frequencyPenalty: 0.5, presencePenalty: -1, repetitionPenalty: 1.1, logitBias: { '50256': -100, '11': 2 }, logprobs: 5 });
    expect(plan({ logprobs: true }).sessions[0]!.sampling).toEqual({ logprobs: 0 });
    expect(plan({ logprobs: false, logit_bias: {} }).sessions[0]!.sampling).toEqual({});
    expect(plan({}).logprobs).toBe(false);
  });

  it('passes a prediction on as text (string or text parts) and speculation as the engine option', () => {
    expect(plan({ prediction: { type: 'content', content: 'x = 1' } }).sessions[0]).toMatchObject({ predictionText: 'x = 1' });
    expect(plan({ prediction: { type: 'content', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, n: 2 }).sessions.map((s) => s.predictionText)).toEqual(['ab', 'ab']);
    expect(plan({ prediction: null }).sessions[0]!.predictionText).toBeUndefined();
    expect(plan({ speculation: { max_draft_tokens: 4 } }).sessions[0]!.speculation).toEqual({ maxDraftTokens: 4 });
    expect(plan({ speculation: 'off' }).sessions[0]!.speculation).toBe('off');
    expect(refusal({ prediction: 'x' as never })).toBe('prediction');
    expect(refusal({ prediction: { type: 'text' } as never })).toBe('prediction.type');
    expect(refusal({ prediction: { type: 'content', content: 7 } as never })).toBe('prediction.content');
    expect(refusal({ speculation: { maxDraftTokens: 4 } as never })).toBe('speculation');
  });

  it('seeds choice 0 with the seed itself and the others apart, the same each time', () => {
    const seeds = plan({ n: 4, seed: 42 }).sessions.map((s) => s.sampling?.seed);
    expect(seeds[0]).toBe(42);
    expect(new Set(seeds).size).toBe(4);
    expect(plan({ n: 4, seed: 42 }).sessions.map((s) => s.sampling?.seed)).toEqual(seeds);
    expect(seeds.every((s) => Number.isInteger(s) && s! >= 0 && s! <= 0xffffffff)).toBe(true);
    expect(choiceSeed(-1, 2)).toBe(-1); // left for the engine to refuse by name
    expect(plan({ n: 2 }).sessions.every((s) => s.sampling?.seed === undefined)).toBe(true);
  });
});
