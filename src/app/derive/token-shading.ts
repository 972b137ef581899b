// What a reply with logprobs shows per token: the reply's text cut at its tokens, each piece's shade
// (the less likely, the stronger), probability and alternatives, as plain data. Pure; the spans: sessions/ReplyParts.tsx.
import type { TokenLogprob } from '../../protocol/events';

/** A log-probability as a percentage people read: one decimal, '<0.1%' below that, never '-0.0%'. */
export function percent(logprob: number): string {
  const p = Math.exp(logprob) * 100;
  if (!(p >= 0.05)) return '<0.1%';
  return `${Math.min(100, p).toFixed(1)}%`;
}

/**
 * How strongly a token is shaded, 0 (the sampler was sure: probability 1) to 1 (probability 0),
 * in steps of 0.05 so a reply's spans share a few styles. A non-finite logprob (a token the
 * distribution gave no weight) shades fully.
 */
export function shadeOf(logprob: number): number {
  const p = Number.isFinite(logprob) ? Math.min(1, Math.max(0, Math.exp(logprob))) : 0;
  return Math.round((1 - p) * 20) / 20;
}

/** A token's text as a quoted literal, so spaces, newlines and empty tokens can be seen. */
export function quoteToken(token: string): string {
  return JSON.stringify(token);
}

/** One line for a token: its text and probability, then the alternatives, most likely first. */
export function describeToken(token: TokenLogprob): string {
  const head = `${quoteToken(token.token)} ${percent(token.logprob)}`;
  const others = token.top.filter((alt) => alt.id !== token.id);
  if (token.top.length === 0) return head;
  if (others.length === 0) return `${head} · the most likely token`;
  return `${head} · alternatives: ${others.map((alt) => `${quoteToken(alt.token)} ${percent(alt.logprob)}`).join(', ')}`;
}

/** The reply's mean token probability and how many tokens fell under 50%, for the reply's foot. */
export function replyConfidence(tokens: readonly TokenLogprob[]): { meanProbability: number; numUnsure: number } | null {
  if (tokens.length === 0) return null;
  let sum = 0;
  let numUnsure = 0;
  for (const t of tokens) {
    const p = Math.exp(t.logprob);
    sum += p;
    if (p < 0.5) numUnsure++;
  }
  return { meanProbability: sum / tokens.length, numUnsure };
}

/** A piece of the reply's text and the tokens that wrote it (none: text no token accounts for). */
export interface TokenSegment {
  text: string;
  tokens: TokenLogprob[];
}

const PARTIAL = '\ufffd';

/**
 * The reply's text cut at its tokens, so the shaded view reads as the reply does. A token decoded
 * alone may be part of a character (a byte of UTF-8: U+FFFD) or lose a leading space
 * (SentencePiece): a run of partial tokens shares the characters they make together, and
 * whitespace before a token joins it. Where the tokens stop lining up with the text, the rest
 * shows each token's own text; text past the last token (none expected) follows unshaded.
 */
export function tokenSegments(text: string, tokens: readonly TokenLogprob[]): TokenSegment[] {
  const segments: TokenSegment[] = [];
  let pos = 0;
  let i = 0;
  const whitespaceUpTo = (at: number) => at >= pos && /^\s*$/.test(text.slice(pos, at));
  while (i < tokens.length) {
    const token = tokens[i]!;
    if (!token.token.includes(PARTIAL)) {
      const at = token.token === '' ? pos : text.indexOf(token.token, pos);
      if (at < 0 || !whitespaceUpTo(at)) break;
      segments.push({ text: text.slice(pos, at + token.token.length), tokens: [token] });
      pos = at + token.token.length;
      i++;
      continue;
    }
    let j = i;
    while (j < tokens.length && tokens[j]!.token.includes(PARTIAL)) j++;
    const next = tokens[j]?.token;
    // the run ends where the next whole token begins, or with the text
    const end = next === undefined ? text.length : next === '' ? -1 : text.indexOf(next, pos + 1);
    if (end <= pos || text.slice(pos, end).includes(PARTIAL)) break;
    segments.push({ text: text.slice(pos, end), tokens: tokens.slice(i, j) });
    pos = end;
    i = j;
  }
  const aligned = i === tokens.length;
  for (; i < tokens.length; i++) segments.push({ text: tokens[i]!.token, tokens: [tokens[i]!] });
  if (aligned && pos < text.length) segments.push({ text: text.slice(pos), tokens: [] });
  return segments;
}

/** A segment's log-probability: its tokens' together (the probability of the characters they make). */
export function segmentLogprob(segment: TokenSegment): number {
  return segment.tokens.reduce((sum, t) => sum + t.logprob, 0);
}

/** A segment's description: its tokens', one after the other. */
export function describeSegment(segment: TokenSegment): string {
  return segment.tokens.map(describeToken).join(' | ');
}
