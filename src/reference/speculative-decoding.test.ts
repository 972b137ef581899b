// Speculative decoding on the CPU reference model (the embedded cohort-tiny) answering NIAH-style
// prompts: token-identical to plain decode, greedy and sampled, alone and in a cohort, in fewer steps.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { CpuRunner } from './cpu-runner';
import { folderOpener } from '../../tools/models/node-files';
import { EngineCore } from '../engine/engine-core';
import type { StepEvent } from '../engine/events';
import type { Speculation } from '../engine/speculation';
import type { ChatTemplate, Tokenizer } from '../engine/types';
import type { ModelDesc } from '../model/desc';
import { loadHfModel } from '../model/hf-loader';

/** cohort-tiny's tokens are bytes; 257/258 open and close a chat message, 258 is EOS. */
const IM_START = 257;
const IM_END = 258;
const tokenizer: Tokenizer = {
  eosTokenIds: [IM_END],
  encode: (text) => Array.from(new TextEncoder().encode(text)),
  decode: (ids) => new TextDecoder().decode(Uint8Array.from(Array.from(ids).filter((id) => id < 256))),
};
const template: ChatTemplate = { render: () => '' }; // turns are sent as token ids
/** DESIGN.md's NIAH prompt, written out here since src/reference may not import src/protocol (as in src/gpu/gpu-runner.test.ts). */
const NIAH_MAX_NEW_TOKENS = 24;
const line = (i: number): string => `Note ${String(i).padStart(4, '0')}: this paragraph is unrelated padding and does not contain the answer.`;
const lines = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => line(from + i));
const niahPrompt = (numLines: number, needleLine: number, code: string): string =>
  [...lines(0, needleLine), '', `IMPORTANT: the secret code is ${code}.`, '', ...lines(needleLine, numLines - needleLine), 'Question: what is the secret code? Answer:'].join('\n');
const chatTokens = (user: string): number[] => [IM_START, ...tokenizer.encode(`user\n${user}`), IM_END, 10, IM_START, ...tokenizer.encode('assistant\n')];

let model: ModelDesc;
beforeAll(async () => {
  model = await loadHfModel(folderOpener(fileURLToPath(new URL('../../public/models/cohort-tiny/', import.meta.url))), { source: 'cohort-tiny' });
});

interface Answer {
  text: string;
  ids: number[];
  /** Steps whose rows decoded for this turn (verify rows included). */
  decodeSteps: number;
  numDrafted: number;
  numAccepted: number;
}

async function answer(prompts: number[][], speculation: Speculation, temperature = 0): Promise<{ answers: Answer[]; numSteps: number }> {
  const runner = new CpuRunner(model, { numBlocks: 257, maxDraftTokens: 8 });
  const engine = new EngineCore({ runner, tokenizer, chatTemplate: template, manualSteps: true, maxTokensPerStep: 2048, speculation });
  const ids = prompts.map((_, i) => engine.createSession({ maxNewTokens: NIAH_MAX_NEW_TOKENS, sampling: { temperature, topK: 20, topP: 0.95 }, seed: 7 + i }));
  const answers: Answer[] = ids.map(() => ({ text: '', ids: [], decodeSteps: 0, numDrafted: 0, numAccepted: 0 }));
  engine.subscribe((e: StepEvent) => {
    for (const row of e.rows) {
      if (row.kind !== 'decode') continue;
      const a = answers[ids.indexOf(row.sessionId)];
      a.decodeSteps++;
      a.numDrafted += row.numDrafted ?? 0;
      a.numAccepted += row.numAccepted ?? 0;
    }
  });
  ids.forEach((id, i) => engine.send(id, prompts[i]));
  let numSteps = 0;
  while (await engine.step()) numSteps++;
  for (const [i, id] of ids.entries()) {
    const result = await engine.waitForTurn(id);
    answers[i].text = result.text;
    answers[i].ids = result.outputTokenIds;
  }
  expect(engine.pool.stats().numUsed).toBe(0);
  return { answers, numSteps };
}

const report = (label: string, answers: Answer[], numSteps: number): string => {
  const drafted = answers.reduce((n, a) => n + a.numDrafted, 0);
  const acceptedCount = answers.reduce((n, a) => n + a.numAccepted, 0);
  const perAnswer = answers.map((a) => a.decodeSteps).join(',');
  return `${label}: steps ${numSteps}, decode steps per answer [${perAnswer}], tokens ${answers.map((a) => a.ids.length).join(',')}, accepted ${acceptedCount}/${drafted}`;
};

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
