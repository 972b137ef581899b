// Golden weights of the synthetic models: every loader, runner and kernel test draws its model
// from syntheticModel, so its values must not move when its random stream's home does.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { syntheticModel, TINY_SYNTH_DIMS } from './synthetic-model-fixtures';

describe('syntheticModel', () => {
  it('draws the recorded weights for a seed', () => {
    const parts = syntheticModel({ arch: 'llama', dims: TINY_SYNTH_DIMS });
    const hash = createHash('sha256');
    for (const [name, t] of parts.tensors) {
      hash.update(name);
      hash.update(new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength));
    }
    expect(hash.digest('hex')).toBe('0139c4b7c3921996e037a206f48325ed9f33e23670a38f691d4b5e7d9b8fe8e6');
    const qwen2 = syntheticModel({ arch: 'qwen2', seed: 5, dims: TINY_SYNTH_DIMS });
    expect(Array.from(qwen2.tensors.get('model.embed_tokens.weight')!.values.slice(0, 3))).toEqual([0.1341911256313324, 0.19285862147808075, -0.19815747439861298]);
  });
});
