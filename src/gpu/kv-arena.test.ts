// planKvArena: blocks from the memory budget, capped by one layer's binding, layers packed into
// buffers within maxBufferSize at aligned offsets; each storage type's layer layout. Pure
// arithmetic, no GPU.
import { describe, expect, it } from 'vitest';
import { KV_CACHE_TYPES, kvBytesPerToken } from '../engine/kv-types';
import { kvLayerLayout, planKvArena } from './kv-arena';

// f32: the sizing arithmetic below is written out in 4-byte values
const shape = { numLayers: 16, blockSize: 16, kvDim: 8 * 64, kvCacheType: 'f32' as const };
const blockLayerBytes = 2 * 16 * 512 * 4; // 64 KiB: K + V of one block in one layer
const roomy = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 31, minStorageBufferOffsetAlignment: 256 };

describe('planKvArena', () => {
  it('buys as many blocks as the budget pays for, in one buffer when it fits', () => {
    const plan = planKvArena(shape, roomy, 256 * 2 ** 20);
    expect(plan.numBlocks).toBe(Math.floor((256 * 2 ** 20) / (blockLayerBytes * 16)));
    expect(plan.layerBytes).toBe(plan.numBlocks * blockLayerBytes);
    expect(plan.numBuffers).toBe(1);
  });

  it('caps blocks at what one layer binding can address and at maxBlocks', () => {
    const tight = { ...roomy, maxStorageBufferBindingSize: 100 * blockLayerBytes };
    expect(planKvArena(shape, tight, 2 ** 40).numBlocks).toBe(100);
    expect(planKvArena(shape, roomy, 2 ** 40, 33).numBlocks).toBe(33);
  });

  it('spreads layers over buffers no larger than maxBufferSize, at aligned offsets', () => {
    const small = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 5 * 10 * blockLayerBytes + 100, minStorageBufferOffsetAlignment: 256 };
    const plan = planKvArena({ ...shape, kvDim: 512 }, small, 16 * 10 * blockLayerBytes, 10);
    expect(plan.layersPerBuffer).toBe(5);
    expect(plan.numBuffers).toBe(4); // 5 + 5 + 5 + 1 layers
    expect(plan.layerStride % 256).toBe(0);
    expect((plan.layersPerBuffer - 1) * plan.layerStride + plan.layerBytes).toBeLessThanOrEqual(small.maxBufferSize);
  });

  it('pads the layer stride to the offset alignment', () => {
    const plan = planKvArena({ numLayers: 2, blockSize: 3, kvDim: 5, kvCacheType: 'f32' }, roomy, 2 ** 20, 7);
    expect(plan.layerBytes).toBe(7 * 2 * 3 * 5 * 4);
    expect(plan.layerStride).toBe(Math.ceil(plan.layerBytes / 256) * 256);
  });

  it('counts a block in its storage type: f16 buys twice the blocks of f32, q8_0 (34 bytes per 32 values) 64/17 times', () => {
    const budget = 256 * 2 ** 20;
    const f32 = planKvArena(shape, roomy, budget);
    const f16 = planKvArena({ ...shape, kvCacheType: 'f16' }, roomy, budget);
    const q8 = planKvArena({ ...shape, kvCacheType: 'q8_0' }, roomy, budget);
    expect(f16.numBlocks).toBe(2 * f32.numBlocks);
    expect(f16.layerBytes).toBe(f16.numBlocks * 2 * 16 * 512 * 2);
    expect(q8.numBlocks).toBe(Math.floor(budget / (16 * 2 * 16 * (512 / 32) * 34)));
    expect(q8.layerBytes).toBe(q8.numBlocks * 2 * 16 * (512 / 32) * 34);
    expect(q8.numBlocks / f32.numBlocks).toBeCloseTo(64 / 17, 2);
  });

  it('refuses a budget below two blocks (block 0 is reserved)', () => {
    expect(() => planKvArena(shape, roomy, blockLayerBytes * 16)).toThrow(/at least 2/);
  });

  it.each(KV_CACHE_TYPES)('sizes a %s pool at kvBytesPerToken per position, its layout filling the layer exactly', (kvCacheType) => {
    const typed = { numLayers: 3, blockSize: 16, kvDim: 2 * 96, kvCacheType };
    const plan = planKvArena(typed, roomy, 2 ** 24, 9);
    const perToken = kvBytesPerToken({ numLayers: 3, numKvHeads: 2, headDim: 96 }, kvCacheType);
    expect(plan.layerBytes * typed.numLayers).toBe(9 * 16 * perToken);
    const layout = kvLayerLayout(kvCacheType, 9 * 16, typed.kvDim);
    expect(layout.words * 4).toBe(plan.layerBytes); // no padding in any type
    expect(layout.vOffsetWords * 4).toBe(kvCacheType === 'q8_0' ? 9 * 16 * typed.kvDim : plan.layerBytes / 2);
  });
});
