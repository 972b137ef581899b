// The KV load options' checks (shape first, then against a model's K/V width and a block's bytes)
// and the sessions a pool holds. Pure.
import { describe, expect, it } from 'vitest';
import { kvOptionsModelProblem, kvOptionsShapeProblem, sessionsThatFit } from './kv-options';

const embedded = { numLayers: 4, numKvHeads: 2, headDim: 32 }; // cohort-tiny: 1,024 f16 bytes per token

describe('kvOptionsShapeProblem', () => {
  it('accepts none, a known type and a positive whole byte count', () => {
    expect(kvOptionsShapeProblem(undefined)).toBeNull();
    expect(kvOptionsShapeProblem({})).toBeNull();
    expect(kvOptionsShapeProblem({ kvCacheType: 'q8_0', kvCacheBytes: 2 ** 33 })).toBeNull();
  });

  it('names the option at fault', () => {
    expect(kvOptionsShapeProblem({ kvCacheType: 'bf16' })).toEqual({ param: 'kvCacheType', message: 'kvCacheType: "bf16" is not one of f32, f16, q8_0' });
    expect(kvOptionsShapeProblem({ kvCacheType: 16 })?.param).toBe('kvCacheType');
    for (const bad of [0, -1, 0.5, Infinity, Number.NaN, '64M']) expect(kvOptionsShapeProblem({ kvCacheBytes: bad })?.param).toBe('kvCacheBytes');
    expect(kvOptionsShapeProblem('f16')?.message).toMatch(/must be an object/);
  });
});

describe('kvOptionsModelProblem', () => {
  it('refuses q8_0 where a token row is not whole blocks of 32 values', () => {
    expect(kvOptionsModelProblem({ kvCacheType: 'q8_0' }, embedded)).toBeNull();
    expect(kvOptionsModelProblem({ kvCacheType: 'q8_0' }, { numLayers: 2, numKvHeads: 3, headDim: 16 })).toMatchObject({ param: 'kvCacheType', message: expect.stringMatching(/multiple of 32; this model has 48/) });
  });

  it('refuses a pool under 2 blocks of the chosen type (block 0 is reserved), f16 by default', () => {
    const f16Block = 16 * 1024;
    expect(kvOptionsModelProblem({ kvCacheBytes: 2 * f16Block }, embedded)).toBeNull();
    expect(kvOptionsModelProblem({ kvCacheBytes: 2 * f16Block - 1 }, embedded)?.param).toBe('kvCacheBytes');
    expect(kvOptionsModelProblem({ kvCacheType: 'f32', kvCacheBytes: 2 * f16Block }, embedded)?.message).toMatch(/buy 1 f32 KV blocks of 32768 bytes/);
    expect(kvOptionsModelProblem({ kvCacheType: 'q8_0', kvCacheBytes: 2 * 16 * 544 }, embedded)).toBeNull();
  });
});

describe('sessionsThatFit', () => {
  it('counts whole sessions in the blocks past the reserved one', () => {
    expect(sessionsThatFit(1 + 128 * 4, 16, 2048)).toBe(4);
    expect(sessionsThatFit(128 * 4, 16, 2048)).toBe(3);
    expect(sessionsThatFit(1 + 256, 16, 4096)).toBe(1);
    expect(sessionsThatFit(1, 16, 2048)).toBe(0);
    expect(sessionsThatFit(0, 0, 2048)).toBe(0); // a server's pool: unknown
  });
});
