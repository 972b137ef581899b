// tools, tool_choice and tool turns as planRequest reads them: the session's tool list, the call
// constraint for 'auto', 'required' and a named function, tool messages as the turn; malformed ones refused by name.
import { describe, expect, it } from 'vitest';
import { planRequest } from './request';
import { callSchema } from './tools';
import type { ChatCompletionCreateParams, ChatCompletionFunctionTool, ChatCompletionMessageParam } from './types';
import { refusedParam } from './testing/plan-refusal';

const WEATHER: ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
};
const TIME: ChatCompletionFunctionTool = { type: 'function', function: { name: 'get_time' } };
const ASK: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];

const plan = (request: Partial<ChatCompletionCreateParams>) => planRequest({ messages: ASK, ...request } as ChatCompletionCreateParams);

const refusal = (request: Partial<ChatCompletionCreateParams>): string | null => refusedParam(request, ASK);

describe('tools and tool_choice', () => {
  it("'auto' (the default with tools): the tools reach every choice's session, held to text or calls in the model's format, both callable", () => {
    for (const p of [plan({ tools: [WEATHER, TIME] }), plan({ tools: [WEATHER, TIME], tool_choice: 'auto', n: 2 })]) {
      for (const s of p.sessions) {
        expect(s.tools).toEqual([WEATHER, TIME]);
        expect(s.sampling?.constraint).toEqual({ kind: 'tool_calls', tools: JSON.stringify([WEATHER, TIME]), parallel: true });
      }
      expect(p.callable).toEqual(['get_weather', 'get_time']);
      expect(p.constraintParam).toBe('tools');
      expect(p.maxCalls).toBe(Infinity);
    }
    const one = plan({ tools: [WEATHER], parallel_tool_calls: false });
    expect(one.maxCalls).toBe(1);
    expect(one.sessions[0]!.sampling?.constraint).toMatchObject({ kind: 'tool_calls', parallel: false });
  });

  it("'auto' beside a response_format: the format holds the reply, its calls are still read", () => {
    const p = plan({ tools: [WEATHER], response_format: { type: 'json_object' } });
    expect(p.sessions[0]!.sampling?.constraint).toEqual({ kind: 'json_object' });
    expect(p.constraintParam).toBe('response_format');
    expect(p.callable).toEqual(['get_weather']);
  });

  it("'none': no tools in the prompt and nothing parsed as a call; an empty list is no tools", () => {
    for (const p of [plan({ tools: [WEATHER], tool_choice: 'none' }), plan({ tools: [] }), plan({})]) {
      expect(p.sessions[0]!.tools).toBeUndefined();
      expect(p.callable).toEqual([]);
      expect(p.sessions[0]!.sampling?.constraint).toBeUndefined();
    }
  });

  it('a named function: the reply is constrained to one call of it, with its parameters as the arguments schema', () => {
    const p = plan({ tools: [WEATHER, TIME], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    expect(p.callable).toEqual(['get_weather']);
    expect(p.sessions[0]!.tools).toHaveLength(2);
    const constraint = p.sessions[0]!.sampling!.constraint!;
    expect(constraint.kind).toBe('json_schema');
    expect(JSON.parse((constraint as { schema: string }).schema)).toEqual({
      type: 'object',
      properties: { name: { const: 'get_weather' }, arguments: WEATHER.function.parameters },
      required: ['name', 'arguments'],
      additionalProperties: false,
    });
  });

  it("'required': one call of any tool (anyOf their schemas); a tool without parameters takes an empty object", () => {
    const p = plan({ tools: [WEATHER, TIME], tool_choice: 'required' });
    expect(p.callable).toEqual(['get_weather', 'get_time']);
    const schema = JSON.parse((p.sessions[0]!.sampling!.constraint as { schema: string }).schema) as { anyOf: unknown[] };
    expect(schema).toEqual(callSchema([WEATHER, TIME]) as unknown);
    expect(schema.anyOf[1]).toEqual({ type: 'object', properties: { name: { const: 'get_time' }, arguments: { type: 'object', properties: {} } }, required: ['name', 'arguments'], additionalProperties: false });
    const one = JSON.parse((plan({ tools: [TIME], tool_choice: 'required' }).sessions[0]!.sampling!.constraint as { schema: string }).schema) as Record<string, unknown>;
    expect(one.anyOf).toBeUndefined();
    expect(one.properties).toEqual({ name: { const: 'get_time' }, arguments: { type: 'object', properties: {} } });
  });

  it('the tools handed on are copies holding only the fields OpenAI defines', () => {
    const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object' }, extra: 1 }, more: 2 } as unknown as ChatCompletionFunctionTool;
    const p = plan({ tools: [tool] });
    expect(p.sessions[0]!.tools).toEqual([{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]);
    expect(p.sessions[0]!.tools![0]!.function.parameters).not.toBe(tool.function.parameters);
  });

  it('refuses malformed tools and tool_choice with a 400 naming the field', () => {
    const bad = (t: unknown) => [WEATHER, t] as never;
    expect(refusal({ tools: 'x' as never })).toBe('tools');
    expect(refusal({ tools: bad(null) })).toBe('tools[1]');
    expect(refusal({ tools: bad({ type: 'custom', custom: { name: 'x' } }) })).toBe('tools[1].type');
    expect(refusal({ tools: bad({ type: 'function' }) })).toBe('tools[1].function');
    expect(refusal({ tools: bad({ type: 'function', function: {} }) })).toBe('tools[1].function.name');
    expect(refusal({ tools: bad({ type: 'function', function: { name: 'has space' } }) })).toBe('tools[1].function.name');
    expect(refusal({ tools: bad({ type: 'function', function: { name: 'x'.repeat(65) } }) })).toBe('tools[1].function.name');
    expect(refusal({ tools: bad(WEATHER) })).toBe('tools[1].function.name'); // the same name twice
    expect(refusal({ tools: bad({ type: 'function', function: { name: 'f', description: 3 } }) })).toBe('tools[1].function.description');
    expect(refusal({ tools: bad({ type: 'function', function: { name: 'f', parameters: [] } }) })).toBe('tools[1].function.parameters');
    expect(refusal({ tools: bad({ type: 'function', function: { name: 'f', strict: 'yes' } }) })).toBe('tools[1].function.strict');
    expect(refusal({ tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) as never })).toBe('tools');
    expect(refusal({ tools: [WEATHER], tool_choice: 'always' as never })).toBe('tool_choice');
    expect(refusal({ tool_choice: 'required' })).toBe('tool_choice'); // no tools to call
    expect(refusal({ tools: [WEATHER], tool_choice: { type: 'custom' } as never })).toBe('tool_choice.type');
    expect(refusal({ tools: [WEATHER], tool_choice: { type: 'function' } as never })).toBe('tool_choice.function.name');
    expect(refusal({ tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'get_time' } } })).toBe('tool_choice.function.name');
    expect(refusal({ functions: [{ name: 'f' }] })).toBe('functions'); // the deprecated shape stays refused
    expect(refusal({ tools: [WEATHER], parallel_tool_calls: 'no' as never })).toBe('parallel_tool_calls');
  });
});

describe('tool turns', () => {
  const CALL = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
  const CALLED: ChatCompletionMessageParam[] = [{ role: 'system', content: 'Be brief.' }, ...ASK, { role: 'assistant', content: null, tool_calls: [CALL] }];

  it('tool results after the last assistant message are the turn; the call joins the history', () => {
    const p = plan({ messages: [...CALLED, { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '21 C' }] }], tools: [WEATHER] });
    expect(p.sessions[0]!.systemPrompt).toBe('Be brief.');
    expect(p.sessions[0]!.history).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', toolCalls: [CALL] },
    ]);
    expect(p.turn).toEqual({ messages: [{ role: 'tool', content: '21 C', toolCallId: 'call_1' }] });
  });

  it('a user message after the results rides in the same turn; a later plain exchange is a text turn again', () => {
    const after = [...CALLED, { role: 'tool', tool_call_id: 'call_1', content: '21 C' }, { role: 'user', content: 'And tomorrow?' }] as ChatCompletionMessageParam[];
    expect(plan({ messages: after }).turn).toEqual({ messages: [{ role: 'tool', content: '21 C', toolCallId: 'call_1' }, { role: 'user', content: 'And tomorrow?' }] });
    const later = [...after, { role: 'assistant', content: 'Sunny.' }, { role: 'user', content: 'Thanks' }] as ChatCompletionMessageParam[];
    const p = plan({ messages: later });
    expect(p.turn).toBe('Thanks');
    expect(p.sessions[0]!.history!.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
  });

  it('refuses malformed calls and results, naming the field', () => {
    const withCall = (call: unknown) => [...ASK, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] as ChatCompletionMessageParam[];
    expect(refusal({ messages: withCall({ ...CALL, id: 1 }) })).toBe('messages[1].tool_calls[0].id');
    expect(refusal({ messages: withCall({ ...CALL, type: 'custom' }) })).toBe('messages[1].tool_calls[0].type');
    expect(refusal({ messages: withCall({ ...CALL, function: { arguments: '{}' } }) })).toBe('messages[1].tool_calls[0].function.name');
    expect(refusal({ messages: withCall({ ...CALL, function: { name: 'f', arguments: { a: 1 } } }) })).toBe('messages[1].tool_calls[0].function.arguments');
    expect(refusal({ messages: [...ASK, { role: 'assistant', content: null, tool_calls: 'x' as never }] })).toBe('messages[1].tool_calls');
    expect(refusal({ messages: [{ role: 'tool', content: 'x' }] })).toBe('messages[0].tool_call_id');
    expect(refusal({ messages: [...CALLED, { role: 'tool', tool_call_id: 'call_9', content: 'x' }] })).toBe('messages[3].tool_call_id');
    // a call left unanswered: the next message must answer it
    expect(refusal({ messages: [...CALLED, { role: 'user', content: 'never mind' }] })).toBe('messages[3].role');
    expect(refusal({ messages: CALLED })).toBe('messages[2]');
    expect(refusal({ messages: [...CALLED, { role: 'tool', tool_call_id: 'call_1', content: 'x' }, { role: 'assistant', content: 'done' }] })).toBe('messages[4].role');
  });
});
