// Tools for chat templates that have no `tools` variable: the tool list as a system-prompt
// instruction, calls and tool results as plain messages; and which call format a model writes.
// Not parsing replies (src/lib/tool-calls.ts).
import type { ChatMessage, ToolCall, ToolDefinition } from '../engine/types';
import { TOOL_CALL_FORMATS, type ToolCallFormatName } from '../protocol/tool-call-format';

/** How a model's prompt carries the tool list: its template's `tools` variable, or plainToolMessages below. */
export type ToolsRendering = 'template' | 'system-prompt';

/**
 * The call format a model writes: the plain rendering's JSON when its template has no `tools`;
 * else what its template teaches (Qwen/Hermes `<tool_call>` tags, Llama 3.1's `"parameters"`
 * JSON), or null when the template shows neither (its calls are still parsed, 'auto' is unconstrained).
 */
export function toolCallFormatOf(rendering: ToolsRendering, templateSource: string): ToolCallFormatName | null {
  if (rendering === 'system-prompt') return 'plain-json';
  if (templateSource.includes(TOOL_CALL_FORMATS.hermes.open)) return 'hermes';
  // Llama 3.1's: 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}'
  // (its quotes escaped or not, as the template's string literal has them)
  if (/\{\s*\\?"name\\?"\s*:[^}]*\\?"parameters\\?"\s*:/.test(templateSource)) return 'llama3-json';
  return null;
}

/** The instruction the plain rendering adds to the system prompt. */
export function toolInstruction(tools: readonly ToolDefinition[]): string {
  const list = tools.map((t) => JSON.stringify(t.function)).join('\n');
  return (
    'You can call these functions (each given as JSON):\n' +
    list +
    '\n\nTo call one, reply with only a JSON object of this form and nothing else:\n' +
    '{"name": <function name>, "arguments": <arguments as a JSON object>}\n' +
    'Otherwise, reply in plain text.'
  );
}

/** A call as the plain rendering writes it, the form toolInstruction asks for. */
export function plainCallText(call: ToolCall): string {
  const plain = TOOL_CALL_FORMATS['plain-json'];
  return `{"name": ${JSON.stringify(call.function.name)}, "${plain.argumentsKey}": ${call.function.arguments.trim() || '{}'}}`;
}

/**
 * The conversation for a template without `tools`: the instruction joins the system prompt (or
 * leads as one), an assistant's calls become its text, and each run of tool results becomes one
 * user message, so templates that insist on user/assistant turns still render it.
 */
export function plainToolMessages(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] | undefined): ChatMessage[] {
  const out: ChatMessage[] = [];
  let previous: ChatMessage | undefined;
  for (const m of messages) {
    if (m.role === 'tool') {
      const result = `Result of call ${m.toolCallId ?? ''}:\n${m.content}`;
      const last = out[out.length - 1];
      if (previous?.role === 'tool' && last) last.content += `\n\n${result}`;
      else out.push({ role: 'user', content: result });
    } else if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      out.push({ role: 'assistant', content: [m.content, ...m.toolCalls.map(plainCallText)].filter((t) => t.length > 0).join('\n') });
    } else {
      out.push({ role: m.role, content: m.content });
    }
    previous = m;
  }
  if (tools && tools.length > 0) {
    const instruction = toolInstruction(tools);
    if (out[0]?.role === 'system') out[0] = { role: 'system', content: `${out[0].content}\n\n${instruction}` };
    else out.unshift({ role: 'system', content: instruction });
  }
  return out;
}
