// The sliding-window capacity figure: sessions of N tokens one KV budget holds for a model with
// local layers, every position kept versus the window honoured (its blocks given back), each pool
// planned by the GPU runner's own planners and filled through the engine's KV manager. Pure; the
// runner script (window-capacity.node.ts) allocates the planned arenas and writes the report.
import { BlockPool } from '../src/engine/block-pool';
import { KVCacheManager } from '../src/engine/kv-manager';
import { slidingGroupBlocks, type KvCacheGroupSpec } from '../src/engine/types';
import { planKvArena, type KvArenaLimits, type KvArenaPlan, type KvShape } from '../src/gpu/kv-arena';
import { planKvGroups } from '../src/gpu/kv-groups';
import type { ModelConfig } from '../src/model/desc';
import type { KvCacheType } from '../src/engine/kv-types';

/** Tokens a prefill chunk feeds, as the engine's default step budget (maxTokensPerStep 512) cuts prompts. */
export const CHUNK_TOKENS = 512;

/**
 * Sessions of `tokens` positions the pools hold at once: each prefilled in CHUNK_TOKENS chunks
 * through KVCacheManager.allocateSlots (and cacheComputedBlocks, which gives a sliding-window
 * group's blocks back), one after another, until a chunk finds no room. Distinct tokens: nothing is shared.
 */
export function fillSessions(blockSize: number, groups: readonly KvCacheGroupSpec[], tokens: number): number {
  const kv = new KVCacheManager(groups.map((g) => ({ pool: new BlockPool(g.numBlocks, blockSize), window: g.window })), { enablePrefixCaching: false });
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
 * Both pools on one budget. The sliding-window group is sized for the row cap (slidingGroupBlocks), and the
 * row cap bounds how many sessions run at once, so the honoured figure takes the largest row cap
 * whose pools still hold that many sessions.
 */
export function windowCapacity(config: ModelConfig, kvCacheType: KvCacheType, blockSize: number, tokens: number, limits: KvArenaLimits, budgetBytes: number): WindowCapacityPoint {
  const shape: KvShape = { numLayers: config.numLayers, blockSize, kvDim: config.numKvHeads * config.headDim, kvCacheType };
  const window = Math.max(...config.layerWindows);
  const kept = planKvArena(shape, limits, budgetBytes);
  const keptSessions = fillSessions(blockSize, [{ numBlocks: kept.numBlocks, window: null }], tokens);
  let best: Omit<WindowCapacityPoint, 'kvCacheType' | 'sessionTokens' | 'keptBlocks' | 'keptSessions'> | null = null;
  for (let maxRows = 1; maxRows <= 4096; maxRows++) {
    const windowBlocks = slidingGroupBlocks(window, blockSize, maxRows, CHUNK_TOKENS);
    const [full, sliding] = planKvGroups(shape, config.layerWindows, limits, budgetBytes, windowBlocks).groups;
    if (!sliding) break;
    const sessions = Math.min(maxRows, fillSessions(blockSize, [{ numBlocks: full!.plan.numBlocks, window: null }, { numBlocks: sliding.plan.numBlocks, window }], tokens));
    if (sessions < maxRows) break;
    best = { maxRows, fullBlocks: full!.plan.numBlocks, windowBlocks, windowSessions: sessions, plans: { kept, full: full!.plan, window: sliding.plan } };
  }
  if (!best) throw new Error(`no row cap lets ${config.numLayers} layers keep a window pool in ${budgetBytes} bytes`);
  return { kvCacheType, sessionTokens: tokens, keptBlocks: kept.numBlocks, keptSessions, ...best };
}
