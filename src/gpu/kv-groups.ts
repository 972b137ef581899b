// How a runner splits its KV budget over its KV cache groups: a model with sliding-window layers
// may keep them in a group of their own, sized exactly as the engine relies on (slidingGroupBlocks)
// and paid first, the global layers' group getting the rest. Pure planning over kv-arena.ts's
// planKvArena; no buffers, no allocation.
import { planKvArena, type KvArenaLimits, type KvArenaPlan, type KvShape } from './kv-arena';

/** One KV cache group's arena: its kind (ModelRunner.kvGroups' window), its layers and its plan. */
export interface KvGroupPlan {
  /** null: full attention; a number: the group's sliding window (its layers' largest). */
  window: number | null;
  numLayers: number;
  plan: KvArenaPlan;
}

export interface KvGroupsPlan {
  /** [groups] the full-attention group first (every layer's when there is one group). */
  groups: KvGroupPlan[];
  /** [numLayers] the group layer l lives in. */
  layerGroup: number[];
  /** Why the sliding layers share the first group though some layer slides, for the model card and logs. */
  note?: string;
}

/** Bytes an arena plan holds: its layers at their stride, the last one unpadded. */
export function arenaBytes(plan: KvArenaPlan, numLayers: number): number {
  return (numLayers - plan.numBuffers) * plan.layerStride + plan.numBuffers * plan.layerBytes;
}

/**
 * Splits `budgetBytes` over two groups when `slidingBlocks` (slidingGroupBlocks of the runner's
 * maxRows and maxTokensPerStep) and some layers slide: the sliding group gets exactly that many
 * blocks of its layers, the full-attention group the rest. Keeps one group of every layer when
 * nothing slides, when every layer slides (the engine's first group keeps every position), or
 * when the budget cannot pay for the sliding group and two full blocks.
 */
export function planKvGroups(shape: KvShape, layerWindows: readonly number[], limits: KvArenaLimits, budgetBytes: number, slidingBlocks: number | null, maxBlocks = Infinity): KvGroupsPlan {
  const keepAll = (note?: string): KvGroupsPlan => ({
    groups: [{ window: null, numLayers: shape.numLayers, plan: planKvArena(shape, limits, budgetBytes, maxBlocks) }],
    layerGroup: new Array<number>(shape.numLayers).fill(0),
    ...(note ? { note } : {}),
  });
  const numSliding = layerWindows.filter((w) => w > 0).length;
  if (slidingBlocks === null || numSliding === 0) return keepAll();
  if (numSliding === shape.numLayers) return keepAll('every layer slides: all positions kept');
  const sliding = planKvArena({ ...shape, numLayers: numSliding }, limits, budgetBytes, slidingBlocks);
  const rest = budgetBytes - arenaBytes(sliding, numSliding);
  const fullShape = { ...shape, numLayers: shape.numLayers - numSliding };
  if (sliding.numBlocks < slidingBlocks || planKvArena(fullShape, limits, Infinity, 2).layerBytes * fullShape.numLayers > rest) {
    return keepAll(`the KV budget cannot hold the sliding-window group (${slidingBlocks} blocks): all positions kept`);
  }
  return {
    groups: [
      { window: null, numLayers: fullShape.numLayers, plan: planKvArena(fullShape, limits, rest, maxBlocks) },
      { window: Math.max(...layerWindows), numLayers: numSliding, plan: sliding },
    ],
    layerGroup: layerWindows.map((w) => (w > 0 ? 1 : 0)),
  };
}
