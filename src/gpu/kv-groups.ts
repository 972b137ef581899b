// How a model with sliding-window layers splits its KV budget: the window group's arena first, sized
// exactly as the engine relies on (windowGroupBlocks), then the global layers' arena from the rest.
// Pure planning over kv-arena.ts's planKvArena; no buffers, no allocation.
import { planKvArena, type KvArenaLimits, type KvArenaPlan, type KvShape } from './kv-arena';

export interface KvGroupsPlan {
  /** The global layers' arena (every layer's when there is no window group). */
  full: KvArenaPlan;
  /** The sliding-window layers' arena, or null: every layer keeps every position in `full`. */
  window: KvArenaPlan | null;
  /** [numLayers] whether layer l lives in the window arena. */
  layerWindowed: boolean[];
  /** Why there is no window arena though some layer slides, for the model card and logs. */
  note?: string;
}

/** Bytes an arena plan holds: its layers at their stride, the last one unpadded. */
export function arenaBytes(plan: KvArenaPlan, numLayers: number): number {
  return (numLayers - plan.numBuffers) * plan.layerStride + plan.numBuffers * plan.layerBytes;
}

/**
 * Splits `budgetBytes` over two arenas when `windowBlocks` (windowGroupBlocks of the runner's
 * maxRows and maxTokensPerStep) and some layers slide: the window arena gets exactly that many
 * blocks of its layers, the full arena the rest. Keeps one arena of every layer when nothing
 * slides, when every layer slides (the engine's block pool needs a full group), or when the
 * budget cannot pay for the window arena and two full blocks.
 */
export function planKvGroups(shape: KvShape, layerWindows: readonly number[], limits: KvArenaLimits, budgetBytes: number, windowBlocks: number | null, maxBlocks = Infinity): KvGroupsPlan {
  const keepAll = (note?: string): KvGroupsPlan => ({
    full: planKvArena(shape, limits, budgetBytes, maxBlocks),
    window: null,
    layerWindowed: new Array<boolean>(shape.numLayers).fill(false),
    ...(note ? { note } : {}),
  });
  const layerWindowed = layerWindows.map((w) => w > 0);
  const numWindowLayers = layerWindowed.filter(Boolean).length;
  if (windowBlocks === null || numWindowLayers === 0) return keepAll();
  if (numWindowLayers === shape.numLayers) return keepAll('every layer slides: all positions kept');
  const window = planKvArena({ ...shape, numLayers: numWindowLayers }, limits, budgetBytes, windowBlocks);
  const rest = budgetBytes - arenaBytes(window, numWindowLayers);
  const fullShape = { ...shape, numLayers: shape.numLayers - numWindowLayers };
  if (window.numBlocks < windowBlocks || planKvArena(fullShape, limits, Infinity, 2).layerBytes * fullShape.numLayers > rest) {
    return keepAll(`the KV budget cannot hold the window pool (${windowBlocks} blocks): all positions kept`);
  }
  return { full: planKvArena(fullShape, limits, rest, maxBlocks), window, layerWindowed };
}
