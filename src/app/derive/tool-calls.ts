// A reply that is a tool call, read from its text: a JSON `{"name": ..., "arguments": ...}` (or
// a list of them), or `<tool_call>...</tool_call>` blocks as Qwen and Hermes templates write them. Pure.

export interface ToolCallView {
  name: string;
  /** The arguments as pretty JSON, or as the model wrote them when they are a string that is not JSON. */
  arguments: string;
}

/** The calls a reply makes, and any prose around `<tool_call>` blocks. */
export interface ParsedToolCalls {
  calls: ToolCallView[];
  text: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One call object; `parameters` is Llama 3.1's spelling of `arguments`. */
function callOf(value: unknown): ToolCallView | null {
  if (!isObject(value) || typeof value.name !== 'string' || value.name.trim() === '') return null;
  const keys = Object.keys(value);
  const args = 'arguments' in value ? value.arguments : value.parameters;
  if (args === undefined || keys.some((k) => k !== 'name' && k !== 'arguments' && k !== 'parameters')) return null;
  if (typeof args === 'string') {
    const parsed = parseJson(args);
    return { name: value.name, arguments: parsed === undefined ? args : JSON.stringify(parsed, null, 2) };
  }
  return { name: value.name, arguments: JSON.stringify(args, null, 2) };
}

function callsOf(value: unknown): ToolCallView[] | null {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return null;
  const calls = list.map(callOf);
  return calls.every((c): c is ToolCallView => c !== null) ? calls : null;
}

/** A reply fenced as a code block (```json ... ```) without its fence. */
function unfence(text: string): string {
  const match = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(text);
  return match ? match[1]! : text;
}

/**
 * The tool calls a reply's whole text makes, or null when it is not one (plain text, JSON of
 * another shape, a `<tool_call>` block left open or holding something else): then it shows as text.
 */
export function parseToolCalls(reply: string): ParsedToolCalls | null {
  const text = reply.trim();
  if (text.includes('<tool_call>')) {
    const calls: ToolCallView[] = [];
    const prose: string[] = [];
    let rest = text;
    for (;;) {
      const open = rest.indexOf('<tool_call>');
      if (open < 0) break;
      const close = rest.indexOf('</tool_call>', open);
      if (close < 0) return null;
      prose.push(rest.slice(0, open));
      const found = callsOf(parseJson(unfence(rest.slice(open + '<tool_call>'.length, close).trim())));
      if (!found) return null;
      calls.push(...found);
      rest = rest.slice(close + '</tool_call>'.length);
    }
    prose.push(rest);
    return { calls, text: prose.map((p) => p.trim()).filter((p) => p !== '').join('\n') };
  }
  const calls = callsOf(parseJson(unfence(text)));
  return calls ? { calls, text: '' } : null;
}
