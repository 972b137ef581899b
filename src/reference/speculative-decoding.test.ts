// Speculative decoding on the CPU reference model (the embedded cohort-tiny) answering NIAH-style
// prompts: token-identical to plain decode, greedy and sampled, alone and in a cohort, in fewer steps.
import { beforeAll, describe, expect, it } from 'vitest';
import { CpuRunner } from './cpu-runner';
import { answer as answerOn, chatTokens, loadCohortTiny, niahPrompt, report } from './testing/speculative-niah.node';
import type { Speculation } from '../engine/speculation';
import type { ModelDesc } from '../model/desc';

let model: ModelDesc;
beforeAll(async () => {
  model = await loadCohortTiny();
});

const answer = (prompts: number[][], speculation: Speculation, temperature = 0) => answerOn(() => new CpuRunner(model, { numBlocks: 257, maxDraftTokens: 8 }), prompts, speculation, temperature);

describe('speculative decoding on CpuRunner (cohort-tiny, NIAH)', () => {
  const cases = [
    { code: 'MAPLE-7890', numLines: 3, needleLine: 1 },
    { code: 'OAK-1234', numLines: 4, needleLine: 3 },
    { code: 'ORCHID-5521', numLines: 2, needleLine: 0 },
    { code: 'KAPPA-3068', numLines: 5, needleLine: 2 },
  ];
  const prompts = cases.map((c) => chatTokens(niahPrompt(c.numLines, c.needleLine, c.code)));

  it('greedy: the same answers as plain decode, alone and in a cohort, in fewer steps', async () => {
    const plain = await answer(prompts, 'off');
    cases.forEach((c, i) => expect(plain.answers[i].text, 'the model finds the needle').toContain(c.code));
    const lines: string[] = [report('off, cohort of 4', plain.answers, plain.numSteps)];
    for (const speculation of [{ maxDraftTokens: 8 }, 'auto'] as Speculation[]) {
      const together = await answer(prompts, speculation);
      expect(together.answers.map((a) => a.ids)).toEqual(plain.answers.map((a) => a.ids));
      lines.push(report(`${JSON.stringify(speculation)}, cohort of 4`, together.answers, together.numSteps));
      for (const [i, prompt] of prompts.entries()) {
        const solo = await answer([prompt], speculation);
        expect(solo.answers[0].ids).toEqual(plain.answers[i].ids);
        if (i === 0) lines.push(report(`${JSON.stringify(speculation)}, alone`, solo.answers, solo.numSteps));
      }
      if (typeof speculation === 'object') {
        // the answer copies the needle from the prompt: prompt lookup drafts it
        expect(together.answers.reduce((n, a) => n + a.numAccepted, 0)).toBeGreaterThan(prompts.length * 4);
        expect(together.numSteps).toBeLessThan(plain.numSteps);
      }
    }
    const soloPlain = await answer([prompts[0]], 'off');
    lines.splice(1, 0, report('off, alone', soloPlain.answers, soloPlain.numSteps));
    if (process.env.SPEC_REPORT) console.log(lines.join('\n'));
  }, 300_000);

  it('sampled (temperature 0.8, top-k 20, top-p 0.95): the same tokens as plain sampling, seed for seed', async () => {
    const plain = await answer(prompts, 'off', 0.8);
    const spec = await answer(prompts, { maxDraftTokens: 8 }, 0.8);
    expect(spec.answers.map((a) => a.ids)).toEqual(plain.answers.map((a) => a.ids));
    expect(spec.answers.reduce((n, a) => n + a.numDrafted, 0)).toBeGreaterThan(0);
  }, 300_000);
});
