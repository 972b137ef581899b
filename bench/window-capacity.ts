// The sliding-window capacity figure: sessions of N tokens one KV budget holds for a model with
// local layers, every position kept versus the window honoured (its blocks given back), each pool
// planned by the GPU runner's own planners and filled through the engine's KV manager. Pure; the
// runner script (window-capacity.node.ts) allocates the planned arenas and writes the report.
import { BlockPool } from '../src/engine/block-pool';
import { KVCacheManager, type KvWindowGroup } from '../src/engine/kv-manager';
import { windowGroupBlocks } from '../src/engine/types';
import { planKvArena, type KvArenaLimits, type KvArenaPlan, type KvShape } from '../src/gpu/kv-arena';
import { planKvGroups } from '../src/gpu/kv-groups';
import type { ModelConfig } from '../src/model/desc';
import type { KvCacheType } from '../src/engine/kv-types';

/** Tokens a prefill chunk feeds, as the engine's default step budget (maxTokensPerStep 512) cuts prompts. */
export const CHUNK_TOKENS = 512;

/**
 * Sessions of `tokens` positions the pools hold at once: each prefilled in CHUNK_TOKENS chunks
 * through KVCacheManager.allocateSlots (and cacheComputedBlocks, which gives window blocks back),
 * one after another, until a chunk finds no room. Distinct tokens: nothing is shared.
 */
export function fillSessions(blockSize: number, numBlocks: number, window: { numBlocks: number; window: number } | null, tokens: number): number {
  const pool = new BlockPool(numBlocks, blockSize);
  const windowGroup: KvWindowGroup | null = window ? { pool: new BlockPool(window.numBlocks, blockSize), window: window.window } : null;
  const kv = new KVCacheManager(pool, { enablePrefixCaching: false, windowGroup });
  for (let s = 0; ; s++) {
    const request = { requestId: `s${s}`, tokenIds: Array.from({ length: tokens }, (_, i) => s * tokens + i), numComputedTokens: 0 };
    while (request.numComputedTokens < tokens) {
      const n = Math.min(CHUNK_TOKENS, tokens - request.numComputedTokens);
      if (kv.allocateSlots(request, n) === null) return s;
      request.numComputedTokens += n;
      kv.cacheComputedBlocks(request);
    }
  }
}

export interface WindowCapacityPoint {
  kvCacheType: KvCacheType;
  sessionTokens: number;
  /** Every position of every layer kept: one arena of all layers. */
  keptBlocks: number;
  keptSessions: number;
  /** The window honoured: the row cap the budget affords, the global layers' blocks, the window layers' blocks. */
  maxRows: number;
  fullBlocks: number;
  windowBlocks: number;
  windowSessions: number;
  plans: { kept: KvArenaPlan; full: KvArenaPlan; window: KvArenaPlan };
}

/**
 * Both pools on one budget. The window pool is sized for the row cap (windowGroupBlocks), and the
 * row cap bounds how many sessions run at once, so the honoured figure takes the largest row cap
 * whose pools still hold that many sessions.
 */
export function windowCapacity(config: ModelConfig, kvCacheType: KvCacheType, blockSize: number, tokens: number, limits: KvArenaLimits, budgetBytes: number): WindowCapacityPoint {
  const shape: KvShape = { numLayers: config.numLayers, blockSize, kvDim: config.numKvHeads * config.headDim, kvCacheType };
  const window = Math.max(...config.layerWindows);
  const kept = planKvArena(shape, limits, budgetBytes);
  const keptSessions = fillSessions(blockSize, kept.numBlocks, null, tokens);
  let best: Omit<WindowCapacityPoint, 'kvCacheType' | 'sessionTokens' | 'keptBlocks' | 'keptSessions'> | null = null;
  for (let maxRows = 1; maxRows <= 4096; maxRows++) {
    const windowBlocks = windowGroupBlocks(window, blockSize, maxRows, CHUNK_TOKENS);
    const plan = planKvGroups(shape, config.layerWindows, limits, budgetBytes, windowBlocks);
    if (!plan.window) break;
    const sessions = Math.min(maxRows, fillSessions(blockSize, plan.full.numBlocks, { numBlocks: plan.window.numBlocks, window }, tokens));
    if (sessions < maxRows) break;
    best = { maxRows, fullBlocks: plan.full.numBlocks, windowBlocks, windowSessions: sessions, plans: { kept, full: plan.full, window: plan.window } };
  }
  if (!best) throw new Error(`no row cap lets ${config.numLayers} layers keep a window pool in ${budgetBytes} bytes`);
  return { kvCacheType, sessionTokens: tokens, keptBlocks: kept.numBlocks, keptSessions, ...best };
}
