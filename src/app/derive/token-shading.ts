// What a reply with logprobs shows per token: its shade (the less likely the token was, the
// stronger), its probability and the alternatives, as plain strings. Pure; the spans: sessions/TokenShading.tsx.
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
