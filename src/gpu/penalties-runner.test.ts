// Penalties, logit bias and logprobs through the whole engine on GpuRunner (cohort-tiny): a row's
// tokens and logprobs the same alone, in a cohort, serialized and under speculation, and greedy
// ones CpuRunner's tokens (logprobs within 1e-3: the two runners' logits differ by rounding).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Speculation } from '../engine/speculation';
import type { SamplingParams } from '../engine/types';
import type { ModelDesc } from '../model/desc';
import { CpuRunner } from '../reference/cpu-runner';
import { answer as answerOn, chatTokens, loadCohortTiny, niahPrompt, type AnswerOptions } from '../reference/testing/speculative-niah.node';
import { GpuRunner } from './gpu-runner';
import { testPipelineCache } from './testing/kernel-harness';
import { kernelSettingFromEnv, loadShader } from './testing/node-gpu';

let model: ModelDesc;
beforeAll(async () => {
  model = await loadCohortTiny();
});

async function makeRunner(): Promise<GpuRunner> {
  const pipelines = await testPipelineCache();
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, numBlocks: 257, maxContext: 1024, maxDraftTokens: 8, kernels: kernelSettingFromEnv() });
}

const answer = (prompts: number[][], speculation: Speculation, temperature: number, options: AnswerOptions) => answerOn(makeRunner, prompts, speculation, temperature, options);

describe('penalties and logprobs on GpuRunner (cohort-tiny)', () => {
  const prompts = [chatTokens(niahPrompt(2, 1, 'MAPLE-7890')), chatTokens(niahPrompt(1, 0, 'ORCHID-5521'))];
  // 77 'M': the needle's first letter banned, so the reply is the penalties' own
  const penalized: Partial<SamplingParams> = { frequencyPenalty: 0.8, presencePenalty: 0.4, repetitionPenalty: 1.2, logitBias: { 77: -100, 32: -2 }, logprobs: 3 };

  it("greedy: CpuRunner's tokens; the same alone, in a cohort and under speculation", async () => {
    const options = { sampling: penalized };
    const together = await answer(prompts, 'off', 0, options);
    const cpu = await answerOn(() => new CpuRunner(model, { numBlocks: 257, maxDraftTokens: 8 }), prompts, 'off', 0, options);
    expect(together.answers.map((a) => a.ids)).toEqual(cpu.answers.map((a) => a.ids));
    together.answers.forEach((a, i) => {
      expect(a.logprobs.length).toBeGreaterThan(0);
      a.logprobs.forEach((lp, j) => {
        const twin = cpu.answers[i]!.logprobs[j]!;
        expect(lp.id).toBe(twin.id);
        expect(lp.logprob).toBeCloseTo(twin.logprob, 3);
        expect(lp.top.map((t) => t.id)).toEqual(twin.top.map((t) => t.id));
      });
    });
    const alone = await answer(prompts.slice(0, 1), 'off', 0, options);
    const speculated = await answer(prompts, { maxDraftTokens: 8 }, 0, options);
    expect(speculated.answers.reduce((n, a) => n + a.numDrafted, 0)).toBeGreaterThan(0);
    expect(alone.answers[0]).toMatchObject({ ids: together.answers[0]!.ids, logprobs: together.answers[0]!.logprobs });
    expect(speculated.answers.map((a) => [a.ids, a.logprobs])).toEqual(together.answers.map((a) => [a.ids, a.logprobs]));
  }, 600_000);

  it('temperature 0.8: the same tokens and logprobs in a cohort, serialized and under speculation', async () => {
    const options = { sampling: penalized };
    const together = await answer(prompts, 'off', 0.8, options);
    const serialized = await answer(prompts, 'off', 0.8, { ...options, mode: 'serialized' });
    const speculated = await answer(prompts, { maxDraftTokens: 8 }, 0.8, options);
    for (const other of [serialized, speculated]) expect(other.answers.map((a) => [a.ids, a.logprobs])).toEqual(together.answers.map((a) => [a.ids, a.logprobs]));
  }, 600_000);
});
