// Chat messages -> prompt token ids: special tokens count only where the template put them;
// what a person typed is always plain text. Not the template renderer itself.

import type { ChatMessage, ChatTemplate, ToolDefinition } from '../engine/types';

/** One element of a prompt: plain text, or the id of a special token placed by a template. */
export type PromptPiece = string | number;

/** What chat encoding needs of a tokenizer (HfTokenizer is one): where its special tokens sit in a text, and pieces encoded. */
export interface ChatPieceTokenizer {
  readonly bosTokenId: number | null;
  readonly addBosToken: boolean;
  specialSpans(text: string): Array<{ start: number; end: number; id: number }>;
  encodePieces(pieces: readonly PromptPiece[]): number[];
}

/**
 * U+FDD0 is a Unicode noncharacter, reserved for internal use: it is never part of a special
 * token, so a span of it in a render marks where message content sat.
 */
const PLACEHOLDER = '\uFDD0';

/** Every non-whitespace UTF-16 unit -> placeholder; keeps length and what trim() sees. */
function maskAll(content: string): string {
  return content.replace(/\S/g, PLACEHOLDER);
}

/**
 * The same render, with message content swapped for placeholders of equal length, shows which
 * special-token strings the template wrote: any special found there cannot come from content.
 * The two renders must line up character for character (outside placeholders); templates
 * that branch on content defeat the full mask, so masking only the special strings in it is
 * tried next.
 */
function templateSpecialSpans(
  tokenizer: ChatPieceTokenizer,
  template: ChatTemplate,
  messages: ChatMessage[],
  addGenerationPrompt: boolean,
  tools: readonly ToolDefinition[] | undefined,
  rendered: string,
): Array<{ start: number; end: number; id: number }> {
  const maskSpecialsOnly = (content: string): string => {
    let out = '';
    let prev = 0;
    for (const { start, end } of tokenizer.specialSpans(content)) {
      out += content.slice(prev, start) + PLACEHOLDER.repeat(end - start);
      prev = end;
    }
    return out + content.slice(prev);
  };
  for (const mask of [maskAll, maskSpecialsOnly]) {
    const masked = template.render(
      messages.map((m) => ({ ...m, content: mask(m.content) })),
      addGenerationPrompt,
      tools,
    );
    if (linesUp(masked, rendered)) return tokenizer.specialSpans(masked);
  }
  throw new Error(
    'the chat template changes message content in a way that prevents telling its special tokens ' +
      'from typed text; refusing to tokenize this prompt',
  );
}

function linesUp(masked: string, rendered: string): boolean {
  if (masked.length !== rendered.length) return false;
  for (let i = 0; i < masked.length; i++) {
    if (masked[i] !== rendered[i] && masked[i] !== PLACEHOLDER) return false;
  }
  return true;
}

/** Pieces of a rendered prompt: template-placed special tokens as ids, the rest as text. */
export function chatPromptPieces(
  tokenizer: ChatPieceTokenizer,
  template: ChatTemplate,
  messages: ChatMessage[],
  addGenerationPrompt: boolean,
  tools?: readonly ToolDefinition[],
): PromptPiece[] {
  const rendered = template.render(messages, addGenerationPrompt, tools);
  const pieces: PromptPiece[] = [];
  let prev = 0;
  for (const span of templateSpecialSpans(tokenizer, template, messages, addGenerationPrompt, tools, rendered)) {
    if (span.start > prev) pieces.push(rendered.slice(prev, span.start));
    pieces.push(span.id);
    prev = span.end;
  }
  if (prev < rendered.length) pieces.push(rendered.slice(prev));
  return pieces;
}

/**
 * Renders and tokenizes a chat. BOS is prepended when the tokenizer asks for it and the
 * template did not already start with it (what llama.cpp does; Hugging Face's
 * apply_chat_template leaves BOS to the template).
 */
export function encodeChat(
  tokenizer: ChatPieceTokenizer,
  template: ChatTemplate,
  messages: ChatMessage[],
  addGenerationPrompt: boolean,
  tools?: readonly ToolDefinition[],
): number[] {
  const ids = tokenizer.encodePieces(chatPromptPieces(tokenizer, template, messages, addGenerationPrompt, tools));
  if (tokenizer.addBosToken && tokenizer.bosTokenId !== null && ids[0] !== tokenizer.bosTokenId) {
    ids.unshift(tokenizer.bosTokenId);
  }
  return ids;
}
