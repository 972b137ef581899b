// Tools for chat templates that have no `tools` variable: the tool list as a system-prompt
// instruction, calls and tool results as plain messages. Not parsing replies (src/lib/tool-calls.ts).
import type { ChatMessage, ToolCall, ToolDefinition } from '../engine/types';

/** How a model's prompt carries the tool list: its template's `tools` variable, or plainToolMessages below. */
export type ToolsRendering = 'template' | 'system-prompt';

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
  return `{"name": ${JSON.stringify(call.function.name)}, "arguments": ${call.function.arguments.trim() || '{}'}}`;
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
