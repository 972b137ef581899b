// The engine loop over the real runners (GpuRunner on Node's WebGPU, CpuRunner): a turn sent the
// moment the last one ends, a reset or close right after a step, thousands of times; async fuzz.
import { describe, expect, it, onTestFinished } from 'vitest';
import { watchUnhandledRejections } from '../engine/testing/unhandled.node';
import { hfFiles, syntheticModel } from '../model/testing/synthetic-model-fixtures';
import { EngineCore } from '../engine/engine-core';
import { runAsyncSchedule, type AsyncFuzzSetup } from '../engine/testing/async-fuzz.node';
import { ByteTokenizer, PlainChatTemplate } from '../engine/testing/test-support';
import { mapOpener } from '../model/byte-source';
import type { ModelDesc } from '../model/desc';
import { loadHfModel } from '../model/hf-loader';
import { CpuRunner } from '../reference/cpu-runner';
import { GpuRunner } from './gpu-runner';
import { testPipelineCache } from './testing/kernel-harness';
import { loadShader, kernelSettingFromEnv } from './testing/node-gpu';
import { RecordingRunner } from './testing/recording-runner';

const NUM_TURNS = Number(process.env.LOOP_TURNS ?? 2000);
const BLOCK_SIZE = 4;
const NUM_BLOCKS = 40;

async function tinyModel(): Promise<ModelDesc> {
  // 260 ids: the byte tokenizer's 256 bytes and its EOS all index the embedding
  const dims = { hidden: 32, intermediate: 64, layers: 1, heads: 2, kvHeads: 1, headDim: 16, vocab: 260 };
  return loadHfModel(mapOpener(hfFiles(syntheticModel({ arch: 'llama', dims, seed: 11 }), 'f32')), { source: 'synthetic-loop' });
}

type RunnerKind = 'GpuRunner' | 'CpuRunner';

async function makeRunner(kind: RunnerKind, model: ModelDesc): Promise<GpuRunner | CpuRunner> {
  if (kind === 'CpuRunner') return new CpuRunner(model, { blockSize: BLOCK_SIZE, numBlocks: NUM_BLOCKS, maxTokensPerStep: 64, maxRows: 8 });
  const pipelines = await testPipelineCache();
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, numBlocks: NUM_BLOCKS, maxTokensPerStep: 64, maxRows: 8, maxContext: 160, kernels: kernelSettingFromEnv() });
}

for (const kind of ['GpuRunner', 'CpuRunner'] as const) {
  describe(`engine loop on ${kind}`, () => {
    it(`a turn sent, a session reset or closed the moment the last turn ends, ${NUM_TURNS} times: no error, one step at a time`, async () => {
      const unhandled = watchUnhandledRejections();
      const inner = await makeRunner(kind, await tinyModel());
      onTestFinished(() => inner.dispose());
      const runner = new RecordingRunner(inner, { keepInner: true });
      const engine = new EngineCore({ runner, tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate() });
      const stepIndexes: number[] = [];
      engine.subscribe((e) => stepIndexes.push(e.stepIndex));
      let id = engine.createSession({ maxNewTokens: 2 });
      const other = engine.createSession({ maxNewTokens: 60 }); // decodes beside the first for a while
      engine.send(id, 'turn 1');
      engine.send(other, 'beside');
      const reasons = new Map<string, number>();
      for (let i = 0; i < NUM_TURNS; i++) {
        const result = await engine.waitForTurn(id);
        reasons.set(result.finishReason, (reasons.get(result.finishReason) ?? 0) + 1);
        // the very next microtask, as a library caller awaiting one completion then starting the next
        if (i % 3 === 1) engine.resetSession(id);
        if (i % 3 === 2) {
          engine.closeSession(id);
          id = engine.createSession({ maxNewTokens: 2 });
        }
        engine.send(id, `turn ${i + 2}`);
      }
      await engine.waitForTurn(id);
      await engine.whenIdle();
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
      expect(runner.maxInFlight).toBe(1);
      expect(stepIndexes).toEqual(stepIndexes.map((_, i) => i));
      expect([...reasons.keys()]).toEqual(['length']);
      expect(engine.pool.stats().numUsed).toBe(0);
      await engine.dispose();
    }, 600_000);

    it('async schedules with injected calls: every turn ends once with its solo tokens', async () => {
      const unhandled = watchUnhandledRejections();
      const inner = await makeRunner(kind, await tinyModel());
      onTestFinished(() => inner.dispose());
      const setup: AsyncFuzzSetup = {
        makeRunner: () => new RecordingRunner(inner, { keepInner: true }),
        tokenizer: new ByteTokenizer(),
        chatTemplate: new PlainChatTemplate(),
        minTokenId: 97,
        maxTokenId: 122,
        maxSessions: 4,
        maxPromptTokens: 24,
        maxNewTokens: 6,
        maxReplacements: 1,
      };
      const numSchedules = kind === 'GpuRunner' ? 12 : 40;
      let numTurns = 0;
      for (let seed = 1; seed <= numSchedules; seed++) {
        try {
          numTurns += (await runAsyncSchedule(setup, seed)).numTurns;
        } catch (err) {
          throw new Error(`seed ${seed}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        }
      }
      expect(unhandled).toEqual([]);
      expect(numTurns).toBeGreaterThan(numSchedules);
    }, 600_000);
  });
}
