// The sampler's host-side shape: chunking per kernel setting, and the vocabulary passes each
// sampling setting costs (the bound: at most 8 with temperature, top-k and top-p). Pure.
import { describe, expect, it } from 'vitest';
import { SAMPLE_CANDIDATE_CAP } from '../engine/sample-numerics';
import { sampleIsGathered, samplerShape, samplerVocabPasses } from './sample-plan';

describe('samplerShape', () => {
  it("chunks a row over 256-invocation workgroups in the 'gpu' setting and takes it whole in 'cpu'", () => {
    expect(samplerShape(128256, 'gpu')).toMatchObject({ workgroupSize: 256, chunkSize: 2048, numChunks: 63, numLevels: 5 });
    expect(samplerShape(32000, 'cpu')).toMatchObject({ workgroupSize: 64, chunkSize: 32000, numChunks: 1, numLevels: 5 });
    expect(samplerShape(97, 'gpu')).toMatchObject({ numChunks: 1, numLevels: 4 });
    expect(samplerShape(2049, 'cpu').numLevels).toBe(5);
    expect(() => samplerShape(2 ** 22 + 1, 'gpu')).toThrow();
  });
});

describe('samplerVocabPasses', () => {
  it('costs one pass greedy, at most 6 with temperature + top-k + top-p, 5 on a small vocabulary', () => {
    expect(samplerVocabPasses({ temperature: 0, topK: 40, topP: 0.9 }, 128256)).toBe(1);
    expect(samplerVocabPasses({ temperature: 0.7, topK: 1, topP: 0.9 }, 128256)).toBe(1);
    expect(samplerVocabPasses({ temperature: 0.7, topK: 40, topP: 0.9 }, 128256)).toBe(6);
    expect(samplerVocabPasses({ temperature: 0.7, topK: 40, topP: 0.9 }, 32000)).toBeLessThanOrEqual(8);
    expect(samplerVocabPasses({ temperature: 0.7, topK: SAMPLE_CANDIDATE_CAP, topP: 1 }, 32000)).toBe(6);
    expect(samplerVocabPasses({ temperature: 1, topK: 0, topP: 0.9 }, 97)).toBe(5); // the whole vocabulary fits under the cap
  });

  it('counts the bisection fallback past the cap: about 50 passes per active cut', () => {
    // 128256 ids: 17 id bits, so 49 per cut; argmax, weights and three kept-mass passes besides
    expect(samplerVocabPasses({ temperature: 1, topK: 0, topP: 1 }, 128256)).toBe(5 + 49);
    expect(samplerVocabPasses({ temperature: 1, topK: 0, topP: 0.9 }, 128256)).toBe(5 + 2 * 49);
    expect(samplerVocabPasses({ temperature: 1, topK: 5000, topP: 0.9 }, 128256)).toBe(5 + 3 * 49);
  });

  it('takes the gathered path exactly when at most SAMPLE_CANDIDATE_CAP ids are kept by rank', () => {
    expect(sampleIsGathered({ temperature: 1, topK: SAMPLE_CANDIDATE_CAP }, 128256)).toBe(true);
    expect(sampleIsGathered({ temperature: 1, topK: SAMPLE_CANDIDATE_CAP + 1 }, 128256)).toBe(false);
    expect(sampleIsGathered({ temperature: 1, topK: 5000 }, 700)).toBe(true);
    expect(sampleIsGathered({ temperature: 1, topK: 0 }, 1025)).toBe(false);
    expect(sampleIsGathered({ temperature: 0, topK: 40 }, 1000)).toBe(false);
  });
});
