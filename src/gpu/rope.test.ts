// Parity of shaders/rope.wgsl (two-level cos/sin tables) with the rope twin, with and without
// Llama-3 scaling, at positions into the thousands. Node WebGPU.
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../model/desc';
import { syntheticModelDesc, TINY_SYNTH_DIMS } from '../../tools/models/synth';
import { rope, ropeInvFreq } from '../reference/ops';
import { runKernel } from './testing/kernel-harness';
import { ropeInverseFrequencies, ropeTable, ropeTableLevel } from './rope-tables';
import { TOKEN_INFO_WORDS } from './step-meta';
import { scaledError, seededFloats } from './testing/test-util';

/** The angle-sum identity in f32 vs the twin's f64 cos/sin of the whole angle. */
const ROPE_TOLERANCE = 1e-5;

const llama3Scaling = { type: 'llama3' as const, factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 };

function configWith(ropeScaling: ModelConfig['ropeScaling'], headDim: number): ModelConfig {
  return { ...syntheticModelDesc({ arch: 'llama', dims: TINY_SYNTH_DIMS }).config, headDim, ropeTheta: 500000, ropeScaling };
}

describe('rope.wgsl', () => {
  for (const scaling of [null, llama3Scaling]) {
    it(`rotates like the twin ${scaling ? 'with Llama-3 scaling' : 'without scaling'}`, async () => {
      const headDim = 32;
      const numHeads = 3;
      const config = configWith(scaling, headDim);
      const invFreq = ropeInverseFrequencies(config);
      expect(Array.from(invFreq)).toEqual(Array.from(ropeInvFreq(config)));

      const positions = [0, 1, 17, 255, 1000, 4095, 4096, 7777];
      const maxPositions = 8192;
      const level = ropeTableLevel(maxPositions);
      const tokens = new Uint32Array(positions.length * TOKEN_INFO_WORDS);
      positions.forEach((p, t) => (tokens[t * TOKEN_INFO_WORDS + 1] = p));
      const x = seededFloats(11, positions.length * numHeads * headDim, 2); // [numTokens, numHeads, headDim]
      const result = await runKernel(
        'rope',
        {},
        [new Uint32Array([positions.length, numHeads, headDim, level]), tokens, ropeTable(invFreq, level), x],
        [Math.ceil((numHeads * headDim) / 2 / 64), positions.length],
        [3],
      );
      const cpu = Float32Array.from(x);
      rope(cpu, positions.length, numHeads, headDim, Int32Array.from(positions), invFreq);
      expect(scaledError(new Float32Array(result.get(3)!), cpu)).toBeLessThanOrEqual(ROPE_TOLERANCE);
    });
  }
});
