// Reading tool calls out of replies: Qwen/Hermes tags, Llama 3.1's and the plain rendering's JSON,
// whole and fed piece by piece (every split point, and one character at a time); text that is no call stays exact.
import { describe, expect, it } from 'vitest';
import { parseToolCalls, ToolCallParser, type ToolCallEvent } from './tool-calls';

const NAMES = new Set(['get_weather', 'get_time']);
const ids = () => {
  let n = 0;
  return () => `call_${n++}`;
};
const parse = (text: string) => parseToolCalls(text, NAMES, { newId: ids() });
const call = (id: string, name: string, args: unknown) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });

/** Feeds `pieces` in order and merges what comes out: text joined, calls in order. */
function feed(pieces: readonly string[]): { text: string; calls: unknown[]; events: ToolCallEvent[][] } {
  const parser = new ToolCallParser(NAMES, { newId: ids() });
  const events = [...pieces.map((p) => parser.push(p)), parser.end()];
  const flat = events.flat();
  return { text: flat.map((e) => (e.kind === 'text' ? e.text : '')).join(''), calls: flat.flatMap((e) => (e.kind === 'call' ? [e.call] : [])), events };
}

const QWEN = 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
const LLAMA = '{"name": "get_weather", "parameters": {"city": "Paris, \\"FR\\" {x}"}}';
const PLAIN = ' {"name": "get_time", "arguments": {}}; {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}\n';

describe('parseToolCalls', () => {
  it('Qwen/Hermes tags: the calls, and the text before them as content', () => {
    expect(parse(QWEN)).toEqual({ content: 'Let me check.', calls: [call('call_0', 'get_weather', { city: 'Paris' }), call('call_1', 'get_time', {})] });
  });

  it("Llama 3.1's JSON with parameters (quotes and braces inside strings), content null", () => {
    expect(parse(LLAMA)).toEqual({ content: null, calls: [call('call_0', 'get_weather', { city: 'Paris, "FR" {x}' })] });
  });

  it("the plain rendering's JSON calls, several, arguments given as a JSON string too", () => {
    expect(parse(PLAIN)).toEqual({ content: null, calls: [call('call_0', 'get_time', {}), call('call_1', 'get_weather', { city: 'Oslo' })] });
  });

  it('a tag left open at the end of the reply (stopped at EOS) still holds a call', () => {
    expect(parse('<tool_call>\n{"name": "get_time", "arguments": {}}\n').calls).toEqual([call('call_0', 'get_time', {})]);
  });

  it('text that is no call comes back exactly: unknown names, bad JSON, arrays, JSON later in prose, unclosed objects', () => {
    for (const text of [
      'Hello there.',
      '  leading and trailing space  \n',
      '',
      '   ',
      '{"name": "delete_everything", "arguments": {}}',
      '{"name": "get_time", "arguments": [1]}',
      '{"name": "get_time", "arguments": "not json"}',
      '{"name": "get_time"',
      '{"not": "a call"} after',
      'The call would be {"name": "get_time", "arguments": {}} but I will not.',
      'a <tool_call>{"name": "nope", "arguments": {}}</tool_call> b',
      '<tool_call>broken</tool_call>',
      '<tool_call>never closed',
      'x < y and <tool_ is not a tag',
      '<tool_callx>',
    ]) {
      expect(parse(text), JSON.stringify(text)).toEqual({ content: text, calls: [] });
    }
  });

  it('at most one call under parallel_tool_calls false: what follows the first is dropped', () => {
    expect(parseToolCalls(QWEN, NAMES, { maxCalls: 1, newId: ids() })).toEqual({ content: 'Let me check.', calls: [call('call_0', 'get_weather', { city: 'Paris' })] });
    expect(parseToolCalls(PLAIN + ' and more text', NAMES, { maxCalls: 1, newId: ids() })).toEqual({ content: null, calls: [call('call_0', 'get_time', {})] });
    const parser = new ToolCallParser(NAMES, { maxCalls: 1, newId: ids() });
    expect(parser.push('{"name": "get_time", "arguments": {}} {"name": "get_time"')).toHaveLength(1);
    expect(parser.push(', "arguments": {}} tail')).toEqual([]);
    expect(parser.end()).toEqual([]);
  });

  it('a known call amid unknown ones: only the known becomes a call, the rest stays text', () => {
    const r = parse('<tool_call>{"name": "nope"}</tool_call><tool_call>{"name": "get_time", "arguments": {}}</tool_call>');
    expect(r.calls).toEqual([call('call_0', 'get_time', {})]);
    expect(r.content).toBe('<tool_call>{"name": "nope"}</tool_call>');
  });
});

describe('ToolCallParser fed piece by piece', () => {
  const REPLIES = [QWEN, LLAMA, PLAIN, 'Hello <tool there', 'The call would be {"name": "get_time"} text', '<tool_call>broken</tool_call> then text  ', '  {"a": [1, {"b": "}"}]} tail'];

  it('every split into two pieces, and one character at a time, gives what the whole reply gives', () => {
    for (const reply of REPLIES) {
      const whole = parse(reply);
      const expectText = whole.content ?? '';
      for (let cut = 0; cut <= reply.length; cut++) {
        const r = feed([reply.slice(0, cut), reply.slice(cut)]);
        expect({ text: r.text.trim() === '' && r.calls.length > 0 ? '' : r.text, calls: r.calls }, `${reply} @${cut}`).toEqual({ text: expectText, calls: whole.calls });
      }
      const chars = feed([...reply]);
      expect(chars.calls).toEqual(whole.calls);
    }
  });

  it('holds back what may start a call and lets text go once it cannot', () => {
    const parser = new ToolCallParser(NAMES, { newId: ids() });
    expect(parser.push('Sure. <tool')).toEqual([{ kind: 'text', text: 'Sure.' }]);
    expect(parser.push('_call>{"name": "get_time", ')).toEqual([]);
    expect(parser.push('"arguments": {}}</tool_call>')).toEqual([{ kind: 'call', call: call('call_0', 'get_time', {}) }]);
    expect(parser.end()).toEqual([]);
    expect(parser.numCalls).toBe(1);

    const text = new ToolCallParser(NAMES, { newId: ids() });
    expect(text.push('<tool')).toEqual([]);
    expect(text.push('box is here')).toEqual([{ kind: 'text', text: '<toolbox is here' }]);

    const json = new ToolCallParser(NAMES, { newId: ids() });
    expect(json.push('  {"name": "get_weather", "arguments": {"city": "Ro')).toEqual([]); // a reply opening with '{' waits
    expect(json.push('me"}}')).toEqual([{ kind: 'call', call: call('call_0', 'get_weather', { city: 'Rome' }) }]);
    expect(json.end()).toEqual([]);
  });

  it('a reply opening with JSON that is no call comes out at once when its object closes', () => {
    const parser = new ToolCallParser(NAMES, { newId: ids() });
    expect(parser.push('{"answer": 42')).toEqual([]);
    expect(parser.push('} is it')).toEqual([{ kind: 'text', text: '{"answer": 42} is it' }]);
  });
});
