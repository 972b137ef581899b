// The sliding-window capacity figure's pure parts: sessions filled through the KV manager, and the
// honoured-vs-kept comparison on a Gemma-3-1B shape.
import { describe, expect, it } from 'vitest';
import { fillSessions, windowCapacity } from './window-capacity';
import { MODEL_SHAPES } from '../tools/models/published-shapes';

const limits = { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30, minStorageBufferOffsetAlignment: 256 };

describe('fillSessions', () => {
  it('counts whole sessions: 4 of 64 positions in 17 usable blocks of 16, the same with a sliding-window group of its own', () => {
    expect(fillSessions(16, [{ numBlocks: 18, window: null }], 64)).toBe(4);
    // the sliding group holds the window: 20 positions need at most 3 blocks a session between chunks
    expect(fillSessions(16, [{ numBlocks: 18, window: null }, { numBlocks: 40, window: 20 }], 64)).toBe(4);
    expect(fillSessions(16, [{ numBlocks: 18, window: null }, { numBlocks: 3, window: 20 }], 64)).toBe(0); // a 64-token chunk needs 4 sliding-group blocks
  });
});

describe('windowCapacity', () => {
  it('holds several times the sessions of 4k tokens for Gemma-3-1B in f16 on 2 GiB', () => {
    const p = windowCapacity(MODEL_SHAPES['Gemma-3-1B']!, 'f16', 16, 4096, limits, 2 * 2 ** 30);
    // every position: 26 layers x 16 KiB a block -> 5,041 blocks -> 19 sessions of 256 blocks
    expect([p.keptBlocks, p.keptSessions]).toEqual([5041, 19]);
    expect(p.windowSessions).toBe(p.maxRows);
    expect(p.windowSessions / p.keptSessions).toBeGreaterThan(3);
  });
});
