// The penalty and logprob twins (penalties.ts, logprobs.ts) against their definitions, and rows
// that use them through the whole engine on CpuRunner: the same tokens and logprobs alone, in a
// cohort, serialized and under speculation.
import { beforeAll, describe, expect, it } from 'vitest';
import { penaltyEntries } from '../engine/penalties';
import type { SamplingParams } from '../engine/types';
import type { ModelDesc } from '../model/desc';
import { CpuRunner } from './cpu-runner';
import { sampledLogprobs } from './logprobs';
import { applyPenalties, penalizedLogit } from './penalties';
import { answer as answerOn, chatTokens, loadCohortTiny, niahPrompt, type AnswerOptions } from './testing/speculative-niah.node';
import type { Speculation } from '../engine/speculation';
import { mulberry32 } from '../engine/seeded-random';

const base: SamplingParams = { temperature: 1, topK: 0, topP: 1, seed: 1 };

describe('penalizedLogit', () => {
  it('divides positive logits by the repetition penalty and multiplies negative ones, for prompt or output tokens', () => {
    const s = { ...base, repetitionPenalty: 2 };
    expect(penalizedLogit(3, 0, true, 0, s)).toBe(1.5);
    expect(penalizedLogit(-3, 1, false, 0, s)).toBe(-6);
    expect(penalizedLogit(3, 0, false, 0, s)).toBe(3); // neither in the prompt nor the output
  });

  it('subtracts frequency per occurrence and presence once, after the bias', () => {
    const s = { ...base, frequencyPenalty: 0.5, presencePenalty: 1.25 };
    expect(penalizedLogit(2, 3, false, 0, s)).toBe(2 - 1.5 - 1.25);
    expect(penalizedLogit(2, 0, true, 0, s)).toBe(2); // the prompt does not count for these
    expect(penalizedLogit(2, 1, false, -100, s)).toBe(Math.fround(-98 - 0.5 - 1.25));
  });
});

describe('applyPenalties', () => {
  const vocab = 50;
  const random = mulberry32(3);
  const logits = () => Float32Array.from({ length: vocab }, () => (random() - 0.5) * 8);
  const s: SamplingParams = { ...base, frequencyPenalty: 0.7, presencePenalty: -0.3, repetitionPenalty: 1.3, logitBias: { 4: 5, 9: -100, 30: 2 } };
  const prompt = [1, 2, 3, 4, 2, 7];
  const output = [7, 8, 8, 11, 4];

  it('after drafts: the logits plain decode penalizes with those drafts in its output', () => {
    const drafts = [8, 12, 12, 30];
    for (let j = 0; j <= drafts.length; j++) {
      const raw = logits();
      const viaDrafts = raw.slice();
      applyPenalties(viaDrafts, s, penaltyEntries(s, [...prompt, ...output], prompt.length, vocab), drafts.slice(0, j));
      const plain = raw.slice();
      applyPenalties(plain, s, penaltyEntries(s, [...prompt, ...output, ...drafts.slice(0, j)], prompt.length, vocab), []);
      expect(viaDrafts).toEqual(plain);
    }
  });

  it('needs the tokens only where a penalty counts them', () => {
    expect(() => penaltyEntries(s, undefined, 0, vocab)).toThrow(RangeError);
    expect(Array.from(penaltyEntries({ ...base, logitBias: { 9: -1, 3: 2 } }, undefined, 0, vocab).ids)).toEqual([3, 9]);
  });

  it('leaves ids no token or bias names alone, and the row unchanged without penalties', () => {
    const raw = logits();
    const out = raw.slice();
    applyPenalties(out, s, penaltyEntries(s, [...prompt, ...output], prompt.length, vocab), [13]);
    const touched = new Set([...prompt, ...output, 4, 9, 30, 13]);
    for (let i = 0; i < vocab; i++) if (!touched.has(i)) expect(out[i]).toBe(raw[i]);
    expect(out[9]).toBeLessThan(raw[9]! - 99);
    const plain = raw.slice();
    applyPenalties(plain, base, penaltyEntries(base, [...prompt, ...output], prompt.length, vocab), [13]);
    expect(plain).toEqual(raw);
  });
});

describe('sampledLogprobs', () => {
  it('is the log-softmax of the scaled logits, its top ids in rank order', () => {
    const random = mulberry32(5);
    const logits = Float32Array.from({ length: 300 }, () => (random() - 0.5) * 10);
    logits[17] = logits[3]!; // a tie: the lower id ranks first
    for (const temperature of [0, 0.7, 1.5]) {
      const scale = temperature > 0 ? 1 / temperature : 1;
      const max = Math.max(...logits);
      const lse = Math.log(logits.reduce((n, l) => n + Math.exp((l - max) * scale), 0));
      const exact = (i: number) => (logits[i]! - max) * scale - lse;
      const got = sampledLogprobs(logits, temperature, 42, 20);
      expect(got.logprob).toBeCloseTo(exact(42), 5);
      const ranked = Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]! || a - b);
      expect(Array.from(got.topIds)).toEqual(ranked.slice(0, 20));
      got.topIds.forEach((id, r) => expect(got.topLogprobs[r]).toBeCloseTo(exact(id), 5));
    }
    expect(sampledLogprobs(logits, 1, 0, 0).topIds.length).toBe(0);
  });
});

describe('penalties and logprobs through the engine on CpuRunner (cohort-tiny)', () => {
  let model: ModelDesc;
  beforeAll(async () => {
    model = await loadCohortTiny();
  });
  const answer = (prompts: number[][], speculation: Speculation, temperature: number, options: AnswerOptions) =>
    answerOn(() => new CpuRunner(model, { numBlocks: 257, maxDraftTokens: 8 }), prompts, speculation, temperature, options);
  const prompts = [
    chatTokens(niahPrompt(3, 1, 'MAPLE-7890')),
    chatTokens(niahPrompt(2, 0, 'ORCHID-5521')),
    chatTokens(niahPrompt(4, 3, 'OAK-1234')),
  ];
  const penalized: Partial<SamplingParams> = { frequencyPenalty: 0.8, presencePenalty: 0.4, repetitionPenalty: 1.2, logitBias: { 77: -100, 32: -2 }, logprobs: 3 }; // 77 'M': the needle's first letter banned

  for (const temperature of [0, 0.8]) {
    it(`temperature ${temperature}: a penalized row's tokens and logprobs alone, in a cohort, serialized and under speculation are one`, async () => {
      const options = { sampling: penalized };
      const together = await answer(prompts, 'off', temperature, options);
      const first = together.answers[0]!;
      expect(first.logprobs.length).toBe(first.ids.filter((id) => id !== 258).length);
      expect(first.logprobs[0]!.top.length).toBe(3);
      const unpenalized = await answer(prompts.slice(0, 1), 'off', temperature, { sampling: { logprobs: 3 } });
      expect(unpenalized.answers[0]!.ids, 'the penalties change the reply').not.toEqual(first.ids);
      const alone = await answer(prompts.slice(0, 1), 'off', temperature, options);
      const serialized = await answer(prompts, 'off', temperature, { ...options, mode: 'serialized' });
      const speculated = await answer(prompts, { maxDraftTokens: 8 }, temperature, options);
      expect(speculated.answers.reduce((n, a) => n + a.numDrafted, 0)).toBeGreaterThan(0);
      expect(alone.answers[0]).toMatchObject({ ids: first.ids, logprobs: first.logprobs });
      for (const other of [serialized, speculated]) {
        expect(other.answers.map((a) => a.ids)).toEqual(together.answers.map((a) => a.ids));
        expect(other.answers.map((a) => a.logprobs)).toEqual(together.answers.map((a) => a.logprobs));
      }
    }, 300_000);
  }

  it('logit_bias alone (no tokens counted, none carried): the same tokens alone, in a cohort and under speculation', async () => {
    const options = { sampling: { logitBias: { 77: -100 } } }; // 77 'M'
    const together = await answer(prompts, 'off', 0, options);
    const plainRun = await answer(prompts.slice(0, 1), 'off', 0, {});
    expect(together.answers[0]!.ids).not.toEqual(plainRun.answers[0]!.ids);
    expect(together.answers[0]!.ids).not.toContain(77);
    const alone = await answer(prompts.slice(0, 1), 'off', 0, options);
    const speculated = await answer(prompts, { maxDraftTokens: 8 }, 0, options);
    expect(alone.answers[0]!.ids).toEqual(together.answers[0]!.ids);
    expect(speculated.answers.map((a) => a.ids)).toEqual(together.answers.map((a) => a.ids));
  }, 300_000);
});
