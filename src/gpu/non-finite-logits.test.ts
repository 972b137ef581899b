// EngineCore on CpuRunner and on GpuRunner with NaN-poisoned synthetic weights: the turn whose
// logits are not finite ends with the NaN/Inf error, a neighbour in the same steps completes.
import { describe, expect, it } from 'vitest';
import { hfFiles, syntheticModel, type SynthDims } from '../model/testing/synthetic-model-fixtures';
import { EngineCore } from '../engine/engine-core';
import { ByteTokenizer, PlainChatTemplate, runToIdle } from '../engine/testing/test-support';
import type { ModelRunner } from '../engine/types';
import { mapOpener } from '../model/byte-source';
import type { ModelDesc } from '../model/desc';
import { loadHfModel } from '../model/hf-loader';
import { CpuRunner } from '../reference/cpu-runner';
import { GpuRunner } from './gpu-runner';
import { testPipelineCache } from './testing/kernel-harness';
import { loadShader, kernelSettingFromEnv } from './testing/node-gpu';

const DIMS: Partial<SynthDims> = { hidden: 64, intermediate: 128, heads: 4, kvHeads: 2, headDim: 16, vocab: 97, layers: 1 };
const BLOCK_SIZE = 16;
const MAX_NEW_TOKENS = 6;
const NAN_ERROR = /^the model produced NaN\/Inf logits at position \d+; the turn was stopped$/;

/** The synthetic llama (untied lm_head), with `poison` applied to its f32 tensors first. */
function model(poison: (tensors: Map<string, { values: Float32Array }>) => void = () => {}): Promise<ModelDesc> {
  const parts = syntheticModel({ arch: 'llama', dims: DIMS, seed: 3 });
  poison(parts.tensors);
  return loadHfModel(mapOpener(hfFiles(parts, 'f32')), { source: 'synthetic-llama-poisoned' });
}

const runners: Array<[string, (m: ModelDesc) => Promise<ModelRunner>]> = [
  ['CpuRunner', (m) => Promise.resolve(new CpuRunner(m, { blockSize: BLOCK_SIZE, numBlocks: 16, maxTokensPerStep: 64, maxRows: 4 }))],
  [
    'GpuRunner',
    async (m) => {
      const pipelines = await testPipelineCache();
      return GpuRunner.create({ device: pipelines.device, pipelines, model: m, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: 16, maxTokensPerStep: 64, maxRows: 4, maxContext: 256, kernels: kernelSettingFromEnv() });
    },
  ],
];

/** Greedy turns of token prompts, all sent before the first step; their results in order. */
async function serve(runner: ModelRunner, prompts: number[][], temperature = 0) {
  const engine = new EngineCore({ runner, tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate(), manualSteps: true });
  const ids = prompts.map((prompt) => {
    const id = engine.createSession({ maxNewTokens: MAX_NEW_TOKENS, sampling: { temperature, topK: 20, seed: 9 } });
    engine.send(id, prompt);
    return id;
  });
  await runToIdle(engine);
  try {
    return await Promise.all(ids.map((id) => engine.waitForTurn(id)));
  } finally {
    runner.dispose();
  }
}

describe.each(runners)('%s with NaN weights', (_, makeRunner) => {
  it('ends the turn with the NaN/Inf error when lm_head is all NaN, greedy or sampled', async () => {
    const poisoned = await model((t) => t.get('lm_head.weight')!.values.fill(NaN));
    for (const temperature of [0, 0.8]) {
      const [turn] = await serve(await makeRunner(poisoned), [[5, 6, 7]], temperature);
      expect(turn!.finishReason).toBe('error');
      expect(turn!.error).toMatch(NAN_ERROR);
      expect(turn!.error).toContain('position 3');
      expect(turn!.outputTokenIds).toEqual([]); // no <pad> stream
    }
  });

  it('ends only the turn that fed a NaN-embedded token; the other row completes with its clean tokens', async () => {
    const clean = await model();
    const goodPrompt = [11, 12, 13, 14];
    const [reference] = await serve(await makeRunner(clean), [goodPrompt]);
    expect(reference!.outputTokenIds).toHaveLength(MAX_NEW_TOKENS);
    // a token the good session never feeds, whose embedding row turns to NaN
    const seen = new Set([...goodPrompt, ...reference!.outputTokenIds]);
    const poisonId = Array.from({ length: 97 }, (_, i) => i).find((i) => !seen.has(i))!;
    const poisoned = await model((t) => t.get('model.embed_tokens.weight')!.values.fill(NaN, poisonId * 64, (poisonId + 1) * 64));

    const [bad, good] = await serve(await makeRunner(poisoned), [[20, poisonId, 21], goodPrompt]);
    expect(bad!.finishReason).toBe('error');
    expect(bad!.error).toMatch(NAN_ERROR);
    expect(bad!.outputTokenIds).toEqual([]);
    expect(good!.finishReason).toBe('length');
    expect(good!.outputTokenIds).toEqual(reference!.outputTokenIds);
  });
});
