// planKvGroups: the sliding-window group's arena sized exactly, the global layers' group's from the
// rest of the budget, and the cases that keep every position in one group.
import { describe, expect, it } from 'vitest';
import { arenaBytes, planKvGroups } from './kv-groups';
import { planKvArena, type KvArenaLimits, type KvShape } from './kv-arena';
import { slidingGroupBlocks } from '../engine/types';

const limits: KvArenaLimits = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30, minStorageBufferOffsetAlignment: 256 };
// Gemma-3-1B: 26 layers, one KV head of 256, every sixth layer global
const shape: KvShape = { numLayers: 26, blockSize: 16, kvDim: 256, kvCacheType: 'f16' };
const windows = Array.from({ length: 26 }, (_, l) => (l % 6 < 5 ? 512 : 0));
const budget = 2 * 2 ** 30;

describe('planKvGroups', () => {
  it('gives the window layers exactly the blocks the engine relies on and the global layers the rest', () => {
    const windowBlocks = slidingGroupBlocks(512, 16, 16, 512);
    const { groups, layerGroup } = planKvGroups(shape, windows, limits, budget, windowBlocks);
    const [full, sliding] = groups;
    expect(groups.map((g) => [g.window, g.numLayers])).toEqual([[null, 4], [512, 22]]);
    expect(sliding!.plan.numBlocks).toBe(windowBlocks);
    expect(layerGroup.filter((g) => g === 1)).toHaveLength(22);
    expect(layerGroup.map((g, l) => g === 1 && windows[l]! > 0 || g === 0 && windows[l] === 0).every(Boolean)).toBe(true);
    const used = arenaBytes(sliding!.plan, 22) + arenaBytes(full!.plan, 4);
    expect(used).toBeLessThanOrEqual(budget);
    // 16 KiB per block and layer in f16: the rest of 2 GiB over 4 global layers
    expect(full!.plan.numBlocks).toBe(Math.floor((budget - arenaBytes(sliding!.plan, 22)) / (4 * 16384)));
    // far more positions than one arena of all 26 layers holds
    expect(full!.plan.numBlocks / planKvArena(shape, limits, budget).numBlocks).toBeGreaterThan(5);
  });

  it('keeps every position in one arena when nothing slides, everything slides, or the budget is too small', () => {
    expect(planKvGroups(shape, new Array(26).fill(0), limits, budget, 100).groups).toHaveLength(1);
    expect(planKvGroups(shape, windows, limits, budget, null).groups).toHaveLength(1);
    const allLocal = planKvGroups(shape, new Array(26).fill(512), limits, budget, 100);
    expect([allLocal.groups.length, allLocal.note]).toEqual([1, 'every layer slides: all positions kept']);
    const small = planKvGroups(shape, windows, limits, 64 * 2 ** 20, slidingGroupBlocks(512, 16, 64, 2048));
    expect(small.groups.map((g) => [g.window, g.numLayers])).toEqual([[null, 26]]);
    expect(small.layerGroup.every((g) => g === 0)).toBe(true);
    expect(small.note).toMatch(/cannot hold the sliding-window group/);
    expect(small.groups[0]!.plan.numBlocks).toBe(planKvArena(shape, limits, 64 * 2 ** 20).numBlocks);
  });
});
