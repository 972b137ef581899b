// Which replies show as tool calls: JSON calls (alone, listed or fenced), <tool_call> blocks with
// prose around them; and which stay text.
import { describe, expect, it } from 'vitest';
import { parseToolCalls } from './tool-calls';

describe('tool calls in a reply', () => {
  it('reads a JSON call, its arguments as pretty JSON whether an object or a JSON string', () => {
    expect(parseToolCalls(' {"name": "get_weather", "arguments": {"city": "Oslo"}} ')).toEqual({ calls: [{ name: 'get_weather', arguments: '{\n  "city": "Oslo"\n}' }], text: '' });
    expect(parseToolCalls('{"name":"f","arguments":"{\\"x\\":1}"}')).toEqual({ calls: [{ name: 'f', arguments: '{\n  "x": 1\n}' }], text: '' });
    expect(parseToolCalls('{"name":"f","arguments":"not json"}')?.calls[0]!.arguments).toBe('not json');
    expect(parseToolCalls('{"name":"f","parameters":{}}')?.calls).toEqual([{ name: 'f', arguments: '{}' }]);
    expect(parseToolCalls('```json\n[{"name":"a","arguments":{}},{"name":"b","arguments":[1]}]\n```')?.calls.map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('reads <tool_call> blocks and keeps the prose around them', () => {
    const reply = 'Let me check.\n<tool_call>\n{"name": "search", "arguments": {"q": "cohort"}}\n</tool_call>\n<tool_call>{"name": "open", "arguments": {"id": 2}}</tool_call>';
    expect(parseToolCalls(reply)).toEqual({
      calls: [
        { name: 'search', arguments: '{\n  "q": "cohort"\n}' },
        { name: 'open', arguments: '{\n  "id": 2\n}' },
      ],
      text: 'Let me check.',
    });
  });

  it('leaves everything else as text', () => {
    for (const reply of [
      'Hello there',
      '',
      '{"name": "Maria Santos", "age": 34}',
      '{"name": "f"}',
      '{"name": "", "arguments": {}}',
      '{"name": "f", "arguments": {}, "extra": 1}',
      '[]',
      '{"name": "f", "arguments": {',
      '<tool_call>{"name": "f", "arguments": {}}',
      '<tool_call>not json</tool_call>',
      '<tool_call>{"name": "f", "arguments": {}}</tool_call> and <tool_call>{"nope": 1}</tool_call>',
    ]) {
      expect(parseToolCalls(reply), reply).toBeNull();
    }
  });
});
