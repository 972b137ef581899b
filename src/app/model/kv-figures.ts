// The model card's KV figures and the KV memory control's input: bytes per token, the pool's bytes,
// how many sessions of 2k and 4k tokens fit, and a budget typed in MiB. Pure; the sizing is the worker's.
import type { ModelInfo } from '../../protocol/api';
import { checkKvCacheOptions, kvCacheOptionMessage } from '../../protocol/kv-cache-options';

/** The session lengths the card (and the capacity benchmark) count. */
export const CARD_SESSION_TOKENS = [2048, 4096] as const;

/**
 * Sessions of `tokens` positions each that the pool holds at once: every session owns
 * ceil(tokens / blockSize) blocks of its own (no shared prefix), block 0 is reserved.
 */
export function sessionsThatFit(numBlocks: number, blockSize: number, tokens: number): number {
  return Math.floor(Math.max(0, numBlocks - 1) / Math.ceil(tokens / blockSize));
}

export interface KvCardFigures {
  type: string;
  bytesPerToken: number;
  poolBytes: number;
  /** Per CARD_SESSION_TOKENS length: sessions that fit, or null past the model's context. */
  sessions: { tokens: number; fit: number | null }[];
}

/** What the card shows of the KV pool; null when a server serves the model (it keeps its own). */
export function kvCardFigures(model: ModelInfo): KvCardFigures | null {
  if (!model.kvCache) return null;
  return {
    type: model.kvCache.type,
    bytesPerToken: model.kvCache.bytesPerToken,
    poolBytes: model.kvCache.bytes,
    sessions: CARD_SESSION_TOKENS.map((tokens) => ({ tokens, fit: tokens > model.maxPositionEmbeddings ? null : sessionsThatFit(model.numBlocks, model.blockSize, tokens) })),
  };
}

/** The KV memory control's budget field: blank is the device's default, else whole MiB within the engine's bounds. */
export function parseBudgetMiB(text: string): { ok: true; bytes: number | undefined } | { ok: false; error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, bytes: undefined };
  if (!/^\d+$/.test(trimmed)) return { ok: false, error: `"${trimmed}" is not a whole number of MiB` };
  const bytes = Number(trimmed) * 2 ** 20;
  const bad = checkKvCacheOptions({ kvCacheBytes: bytes });
  return bad ? { ok: false, error: kvCacheOptionMessage(bad) } : { ok: true, bytes };
}
