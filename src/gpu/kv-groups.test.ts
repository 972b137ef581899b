// planKvGroups: the window arena sized exactly, the global layers' arena from the rest of the
// budget, and the cases that keep every position in one arena.
import { describe, expect, it } from 'vitest';
import { arenaBytes, planKvGroups } from './kv-groups';
import { planKvArena, type KvArenaLimits, type KvShape } from './kv-arena';
import { windowGroupBlocks } from '../engine/types';

const limits: KvArenaLimits = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30, minStorageBufferOffsetAlignment: 256 };
// Gemma-3-1B: 26 layers, one KV head of 256, every sixth layer global
const shape: KvShape = { numLayers: 26, blockSize: 16, kvDim: 256, kvCacheType: 'f16' };
const windows = Array.from({ length: 26 }, (_, l) => (l % 6 < 5 ? 512 : 0));
const budget = 2 * 2 ** 30;

describe('planKvGroups', () => {
  it('gives the window layers exactly the blocks the engine relies on and the global layers the rest', () => {
    const windowBlocks = windowGroupBlocks(512, 16, 16, 512);
    const plan = planKvGroups(shape, windows, limits, budget, windowBlocks);
    expect(plan.window!.numBlocks).toBe(windowBlocks);
    expect(plan.layerWindowed.filter(Boolean)).toHaveLength(22);
    const used = arenaBytes(plan.window!, 22) + arenaBytes(plan.full, 4);
    expect(used).toBeLessThanOrEqual(budget);
    // 16 KiB per block and layer in f16: the rest of 2 GiB over 4 global layers
    expect(plan.full.numBlocks).toBe(Math.floor((budget - arenaBytes(plan.window!, 22)) / (4 * 16384)));
    // far more positions than one arena of all 26 layers holds
    expect(plan.full.numBlocks / planKvArena(shape, limits, budget).numBlocks).toBeGreaterThan(5);
  });

  it('keeps every position in one arena when nothing slides, everything slides, or the budget is too small', () => {
    expect(planKvGroups(shape, new Array(26).fill(0), limits, budget, 100).window).toBeNull();
    expect(planKvGroups(shape, windows, limits, budget, null).window).toBeNull();
    const allLocal = planKvGroups(shape, new Array(26).fill(512), limits, budget, 100);
    expect([allLocal.window, allLocal.note]).toEqual([null, 'every layer slides: all positions kept']);
    const small = planKvGroups(shape, windows, limits, 64 * 2 ** 20, windowGroupBlocks(512, 16, 64, 2048));
    expect(small.window).toBeNull();
    expect(small.note).toMatch(/cannot hold the window pool/);
    expect(small.full.numBlocks).toBe(planKvArena(shape, limits, 64 * 2 ** 20).numBlocks);
  });
});
