// The model card's KV figures over ModelInfo as the host reports it, and the budget field's parsing.
import { describe, expect, it } from 'vitest';
import { kvBytesPerToken } from '../../model/kv-types';
import type { ModelInfo } from '../../protocol/api';
import { kvCardFigures, parseBudgetMiB, sessionsThatFit } from './kv-figures';

const base = { name: 'm', arch: 'llama', numLayers: 16, hiddenSize: 2048, vocabSize: 128256, maxPositionEmbeddings: 131072, dtypes: ['f16'], numParams: 1, weightBytes: 1, blockSize: 16, contextTokens: 4096 };

describe('sessionsThatFit', () => {
  it('counts whole sessions of their own blocks, block 0 reserved', () => {
    expect(sessionsThatFit(257, 16, 2048)).toBe(2); // 256 usable blocks, 128 a session
    expect(sessionsThatFit(256, 16, 2048)).toBe(1); // one short of the second
    expect(sessionsThatFit(257, 16, 2049)).toBe(1); // a position past 2048 takes a 129th block
    expect(sessionsThatFit(1, 16, 16)).toBe(0);
    expect(sessionsThatFit(0, 16, 16)).toBe(0);
  });
});

describe('kvCardFigures', () => {
  it("gives bytes per token and sessions at 2k and 4k for Llama-3.2-1B's shape in a 1 GiB q8_0 pool", () => {
    const bytesPerToken = kvBytesPerToken('q8_0', 16, 512); // 17,408
    const numBlocks = Math.floor(2 ** 30 / (16 * bytesPerToken));
    const model: ModelInfo = { ...base, numBlocks, kvCache: { type: 'q8_0', bytesPerToken, bytes: numBlocks * 16 * bytesPerToken } };
    const figures = kvCardFigures(model)!;
    expect(figures.bytesPerToken).toBe(17408);
    expect(numBlocks).toBe(3855);
    expect(figures.sessions).toEqual([
      { tokens: 2048, fit: 30 }, // 3854 usable / 128
      { tokens: 4096, fit: 15 },
    ]);
  });

  it('has no 4k figure past the model context, and nothing for a server', () => {
    const model: ModelInfo = { ...base, maxPositionEmbeddings: 2048, numBlocks: 513, kvCache: { type: 'f16', bytesPerToken: 1024, bytes: 513 * 16 * 1024 } };
    expect(kvCardFigures(model)!.sessions).toEqual([
      { tokens: 2048, fit: 4 },
      { tokens: 4096, fit: null },
    ]);
    expect(kvCardFigures({ ...model, kvCache: undefined })).toBeNull();
  });
});

describe('parseBudgetMiB', () => {
  it('reads blank as the default and whole MiB as bytes, refusing the rest', () => {
    expect(parseBudgetMiB('  ')).toEqual({ ok: true, bytes: undefined });
    expect(parseBudgetMiB('1024')).toEqual({ ok: true, bytes: 2 ** 30 });
    expect(parseBudgetMiB('1.5')).toMatchObject({ ok: false, error: expect.stringContaining('whole number') });
    expect(parseBudgetMiB('-4')).toMatchObject({ ok: false });
    expect(parseBudgetMiB('0')).toMatchObject({ ok: false, error: expect.stringContaining('kvCacheBytes must be') });
    expect(parseBudgetMiB(String(2 ** 21))).toMatchObject({ ok: false, error: expect.stringContaining('1 TiB') });
  });
});
