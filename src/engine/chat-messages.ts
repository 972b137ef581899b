// The one check of the chat messages and tool lists a session takes (its history, a turn's
// messages, its tools), run wherever they enter the engine. Not their rendering (the chat template).
import { InvalidOptionError } from './errors';
import type { ChatMessage, ToolDefinition } from './types';

/** A message of a session's conversation: no system message (that is the session's systemPrompt). */
export type ConversationMessage = ChatMessage & { role: 'user' | 'assistant' | 'tool' };

/** Throws InvalidOptionError naming `option` unless `message` is a user, assistant or tool message. */
export function checkConversationMessage(option: string, message: unknown): asserts message is ConversationMessage {
  const fail = (): never => {
    throw new InvalidOptionError(option, message, 'a user, assistant or tool message with text content (assistant: optional toolCalls; tool: a toolCallId)');
  };
  if (!isRecord(message) || typeof message.content !== 'string') return fail();
  const { role, toolCalls, toolCallId } = message;
  if (role !== 'user' && role !== 'assistant' && role !== 'tool') return fail();
  if (toolCalls !== undefined) {
    const callsOk =
      role === 'assistant' &&
      Array.isArray(toolCalls) &&
      toolCalls.every((c: unknown) => isRecord(c) && typeof c.id === 'string' && c.type === 'function' && isRecord(c.function) && typeof c.function.name === 'string' && typeof c.function.arguments === 'string');
    if (!callsOk) return fail();
  }
  if (toolCallId !== undefined && !(role === 'tool' && typeof toolCallId === 'string')) return fail();
}

/** A message as the session keeps it: its own copy, only the fields a template reads. */
export function copyConversationMessage(m: ConversationMessage): ConversationMessage {
  return {
    role: m.role,
    content: m.content,
    ...(m.toolCalls ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } })) } : {}),
    ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
  };
}

/** Throws InvalidOptionError unless `tools` is a list of functions, each with a name. */
export function checkTools(tools: unknown): asserts tools is ToolDefinition[] {
  const ok = Array.isArray(tools) && tools.every((t: unknown) => isRecord(t) && t.type === 'function' && isRecord(t.function) && typeof t.function.name === 'string');
  if (!ok) throw new InvalidOptionError('tools', tools, "an array of { type: 'function', function: { name, description?, parameters? } }");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A turn given as messages (tool results, then perhaps a user message) rather than one user text. */
export interface TurnMessages {
  messages: ConversationMessage[];
}

/** Throws InvalidOptionError unless `input` holds at least one user or tool message (and assistant ones before them, if any). */
export function checkTurnMessages(input: TurnMessages): void {
  const messages: unknown = input.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidOptionError('messages', messages, 'a non-empty array of messages');
  messages.forEach((m: unknown, i) => checkConversationMessage(`messages[${i}]`, m));
  const last = messages[messages.length - 1] as ConversationMessage;
  if (last.role === 'assistant') throw new InvalidOptionError(`messages[${messages.length - 1}]`, last, 'a user or tool message (the turn answers it)');
}
