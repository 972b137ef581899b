// Byte counts of the KV storage types against llama.cpp's per-type sizes (ggml_row_size) for
// real model shapes. Not a kernel test.
import { describe, expect, it } from 'vitest';
import { kvBytesPerToken, kvCacheTypeProblem, kvValueBytes } from './kv-types';

describe('kv-types', () => {
  it('counts bytes as ggml_row_size does', () => {
    expect(kvValueBytes('f32', 64)).toBe(256);
    expect(kvValueBytes('f16', 64)).toBe(128);
    expect(kvValueBytes('q8_0', 64)).toBe(68); // 2 blocks of 32 int8 + one f16 scale
  });

  it('gives Llama-3.2-1B 64 KiB per token in f32, half in f16, 34/128 of it in q8_0', () => {
    const llama1b = { numLayers: 16, numKvHeads: 8, headDim: 64 };
    expect(kvBytesPerToken(llama1b, 'f32')).toBe(64 * 1024);
    expect(kvBytesPerToken(llama1b, 'f16')).toBe(32 * 1024);
    expect(kvBytesPerToken(llama1b, 'q8_0')).toBe(17 * 1024);
  });

  it('refuses q8_0 rows that are not whole blocks', () => {
    expect(kvCacheTypeProblem('q8_0', 64)).toBeNull();
    expect(kvCacheTypeProblem('q8_0', 48)).toMatch(/multiple of 32/);
    expect(kvCacheTypeProblem('f16', 64)).toBeNull();
  });
});
