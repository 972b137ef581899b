// Speculative decoding through the whole engine on GpuRunner (the embedded cohort-tiny, NIAH-style
// prompts): the same answers as plain decode, greedy and seeded sampling, in fewer steps.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Speculation } from '../engine/speculation';
import type { ModelDesc } from '../model/desc';
import { answer as answerOn, chatTokens, loadCohortTiny, niahPrompt, report } from '../reference/testing/speculative-niah.node';
import { GpuRunner } from './gpu-runner';
import { testPipelineCache } from './testing/kernel-harness';
import { loadShader, kernelSettingFromEnv } from './testing/node-gpu';

let model: ModelDesc;
beforeAll(async () => {
  model = await loadCohortTiny();
});

async function makeRunner(): Promise<GpuRunner> {
  const pipelines = await testPipelineCache();
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, numBlocks: 257, maxContext: 1024, maxDraftTokens: 8, kernels: kernelSettingFromEnv() });
}

const answer = (prompts: number[][], speculation: Speculation, temperature = 0) => answerOn(makeRunner, prompts, speculation, temperature);

describe('speculative decoding on GpuRunner (cohort-tiny, NIAH)', () => {
  // fewer and shorter cases than the CpuRunner suite's: SwiftShader runs them
  const cases = [
    { code: 'MAPLE-7890', numLines: 2, needleLine: 1 },
    { code: 'ORCHID-5521', numLines: 1, needleLine: 0 },
  ];
  const prompts = cases.map((c) => chatTokens(niahPrompt(c.numLines, c.needleLine, c.code)));

  it('greedy: the same answers as plain decode, in a cohort and alone, in fewer steps', async () => {
    const plain = await answer(prompts, 'off');
    cases.forEach((c, i) => expect(plain.answers[i].text, 'the model finds the needle').toContain(c.code));
    const drafted = await answer(prompts, { maxDraftTokens: 8 });
    expect(drafted.answers.map((a) => a.ids)).toEqual(plain.answers.map((a) => a.ids));
    // the answer copies the needle from the prompt: prompt lookup drafts it
    expect(drafted.answers.reduce((n, a) => n + a.numAccepted, 0)).toBeGreaterThan(prompts.length * 4);
    expect(drafted.numSteps).toBeLessThan(plain.numSteps);
    const solo = await answer([prompts[0]], 'auto');
    expect(solo.answers[0].ids).toEqual(plain.answers[0].ids);
    if (process.env.SPEC_REPORT) {
      const soloPlain = await answer([prompts[0]], 'off');
      const lines = [
        report('off, cohort', plain.answers, plain.numSteps, plain.wallMs),
        report('{"maxDraftTokens":8}, cohort', drafted.answers, drafted.numSteps, drafted.wallMs),
        report('off, alone', soloPlain.answers, soloPlain.numSteps, soloPlain.wallMs),
        report('"auto", alone', solo.answers, solo.numSteps, solo.wallMs),
      ];
      console.log(lines.join('\n'));
    }
  }, 300_000);

  it('sampled (temperature 0.8, top-k 20, top-p 0.95): the same tokens as plain sampling, seed for seed, alone', async () => {
    const plain = await answer(prompts.slice(0, 1), 'off', 0.8);
    const spec = await answer(prompts.slice(0, 1), { maxDraftTokens: 8 }, 0.8);
    expect(spec.answers.map((a) => a.ids)).toEqual(plain.answers.map((a) => a.ids));
    expect(spec.answers.reduce((n, a) => n + a.numDrafted, 0)).toBeGreaterThan(0);
  }, 300_000);
});
