// The model panel's KV memory figures and its control's reading: bytes per token, the pool's size,
// sessions of 2k and 4k tokens that fit, and the size field's MiB text as load options. Pure.
import type { KvCacheOptions, KvCacheType, ModelInfo } from '../../protocol/api';
import { sessionsThatFit } from '../../protocol/kv-options';

/** Session lengths the model card counts. */
export const CARD_SESSION_TOKENS = [2048, 4096] as const;

export interface KvCardFigures {
  kvCacheType: KvCacheType | null;
  bytesPerToken: number;
  /** Bytes of K and V the pool holds (block 0 included). */
  poolBytes: number;
  /** Sessions of each CARD_SESSION_TOKENS length the pool holds at once. */
  sessions: { tokens: number; count: number }[];
}

export function kvCardFigures(model: Pick<ModelInfo, 'kvCacheType' | 'kvBytesPerToken' | 'numBlocks' | 'blockSize' | 'kvGroups'>): KvCardFigures {
  // each KV cache group's pool holds its own layers (with a sliding-window group, the first holds only the global layers)
  const groups = model.kvGroups ?? [{ numBlocks: model.numBlocks, window: null, bytesPerToken: model.kvBytesPerToken }];
  return {
    kvCacheType: model.kvCacheType ?? null,
    bytesPerToken: model.kvBytesPerToken,
    poolBytes: model.blockSize * groups.reduce((n, g) => n + g.numBlocks * g.bytesPerToken, 0),
    sessions: CARD_SESSION_TOKENS.map((tokens) => ({ tokens, count: sessionsThatFit(model.numBlocks, model.blockSize, tokens) })),
  };
}

/** The control's state as load options: an empty size means "from the device"; else whole MiB. */
export function kvLoadOptions(kvCacheType: KvCacheType, sizeMib: string): { ok: true; options: KvCacheOptions } | { ok: false; message: string } {
  const text = sizeMib.trim();
  if (text === '') return { ok: true, options: { kvCacheType } };
  const mib = Number(text);
  if (!Number.isInteger(mib) || mib < 1) return { ok: false, message: `KV pool size: "${text}" is not a whole number of MiB (leave it empty to size it from the GPU)` };
  return { ok: true, options: { kvCacheType, kvCacheBytes: mib * 2 ** 20 } };
}
