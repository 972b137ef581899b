// The model card's KV figures and the KV control's reading of its size field. Pure.
import { describe, expect, it } from 'vitest';
import { kvCardFigures, kvLoadOptions } from './kv-memory';

describe('kvCardFigures', () => {
  it('says bytes per token, the pool size and the 2k and 4k sessions that fit', () => {
    const figures = kvCardFigures({ kvCacheType: 'f16', kvBytesPerToken: 1024, numBlocks: 1 + 128 * 8, blockSize: 16 });
    expect(figures.bytesPerToken).toBe(1024);
    expect(figures.poolBytes).toBe((1 + 128 * 8) * 16 * 1024);
    expect(figures.sessions).toEqual([{ tokens: 2048, count: 8 }, { tokens: 4096, count: 4 }]);
  });

  it("counts a window pool's bytes apart: the main pool then holds only the global layers", () => {
    // 26 layers of 1,024 bytes a token, 22 of them local in a pool of 100 blocks
    const figures = kvCardFigures({ kvCacheType: 'f16', kvBytesPerToken: 26 * 1024, numBlocks: 1 + 128 * 8, blockSize: 16, kvGroups: [{ numBlocks: 1 + 128 * 8, window: null, bytesPerToken: 4 * 1024 }, { numBlocks: 100, window: 512, bytesPerToken: 22 * 1024 }] });
    expect(figures.poolBytes).toBe(16 * ((1 + 128 * 8) * 4 * 1024 + 100 * 22 * 1024));
    expect(figures.sessions).toEqual([{ tokens: 2048, count: 8 }, { tokens: 4096, count: 4 }]);
  });
});

describe('kvLoadOptions', () => {
  it('reads an empty size as "from the device" and MiB as bytes', () => {
    expect(kvLoadOptions('q8_0', ' ')).toEqual({ ok: true, options: { kvCacheType: 'q8_0' } });
    expect(kvLoadOptions('f16', '256')).toEqual({ ok: true, options: { kvCacheType: 'f16', kvCacheBytes: 256 * 2 ** 20 } });
  });

  it('refuses a size that is not a whole positive number of MiB', () => {
    for (const bad of ['0', '-4', '1.5', 'lots']) expect(kvLoadOptions('f16', bad).ok).toBe(false);
  });
});
