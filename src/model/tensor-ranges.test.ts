// Unit cases of the shared overlap check: neighbours after sorting, containment, empty tensors.
// Not the loaders: malformed.test.ts feeds them whole files with overlapping tensors.
import { describe, expect, it } from 'vitest';
import { ModelFormatError } from './errors';
import { checkNoOverlap } from './tensor-ranges';

const r = (name: string, begin: number, end: number) => ({ name, begin, end });

describe('checkNoOverlap', () => {
  it('accepts disjoint and touching ranges in any order', () => {
    expect(() => checkNoOverlap('f', [r('c', 200, 300), r('a', 0, 100), r('b', 100, 200)])).not.toThrow();
    expect(() => checkNoOverlap('f', [])).not.toThrow();
  });

  it('names both tensors and their byte ranges', () => {
    expect(() => checkNoOverlap('m.gguf', [r('blk.0.attn_k.weight', 150, 250), r('blk.0.attn_q.weight', 0, 200)])).toThrow(
      new ModelFormatError('m.gguf', 'tensors "blk.0.attn_q.weight" and "blk.0.attn_k.weight" overlap in the file (bytes [0, 200) and [150, 250))'),
    );
  });

  it('finds a range inside a larger one and two tensors on the same bytes', () => {
    expect(() => checkNoOverlap('f', [r('big', 0, 1000), r('inner', 400, 500), r('after', 1000, 1100)])).toThrow(/"big" and "inner" overlap/);
    expect(() => checkNoOverlap('f', [r('token_embd.weight', 64, 128), r('output.weight', 64, 128)])).toThrow(/"token_embd.weight" and "output.weight" overlap/);
  });

  it('lets empty tensors sit anywhere, as they own no bytes', () => {
    expect(() => checkNoOverlap('f', [r('a', 0, 100), r('empty', 50, 50), r('empty2', 50, 50)])).not.toThrow();
  });
});
