// Parity of shaders/penalties.wgsl with applyPenalties (bias, repetition, frequency, presence, the
// drafts before a verify position), bit for bit, and of sample.wgsl's logprobs with
// sampledLogprobs in both kernel settings. Node WebGPU (SwiftShader).
import { describe, expect, it } from 'vitest';
import { inverseRepetitionPenalty, penaltyEntries } from '../engine/penalties';
import { mulberry32 } from '../engine/seeded-random';
import type { SamplingParams } from '../engine/types';
import { sampledLogprobs } from '../reference/logprobs';
import { applyPenalties } from '../reference/penalties';
import { sampleToken } from '../reference/sample';
import type { KernelSetting } from './kernels';
import { PENALTY_ENTRY_WORDS, PENALTY_INFO_WORDS, TOKEN_INFO_WORDS } from './step-meta';
import { runKernel } from './testing/kernel-harness';
import { sampleWithLogprobsOnGpu, type SampleRow } from './testing/sample-runner';
import { bits, seededFloats } from './testing/test-util';

interface PenalizedPosition {
  sampling: SamplingParams;
  /** prompt, then output */
  tokens: number[];
  numPromptTokens: number;
  /** the row's drafts this step, and how many come before this position */
  drafts: number[];
  numDrafts: number;
}

/** Runs penalties.wgsl over one logits row per position, as the runner packs them; returns the logits. */
async function penalizeOnGpu(positions: PenalizedPosition[], logits: Float32Array, vocab: number): Promise<Float32Array> {
  const tokens: number[] = [];
  const infos = new ArrayBuffer(positions.length * PENALTY_INFO_WORDS * 4);
  const iu = new Uint32Array(infos);
  const ifl = new Float32Array(infos);
  const entryWords: number[] = [];
  const f = new Float32Array(1);
  const fBits = new Uint32Array(f.buffer);
  positions.forEach((p, i) => {
    const e = penaltyEntries(p.sampling, p.tokens, p.numPromptTokens, vocab);
    const first = entryWords.length / PENALTY_ENTRY_WORDS;
    e.ids.forEach((id, j) => {
      f[0] = e.bias[j]!;
      entryWords.push(id, e.counts[j]!, e.inPrompt[j]!, fBits[0]!);
    });
    const firstDraft = tokens.length / TOKEN_INFO_WORDS;
    for (const id of p.drafts) tokens.push(id, 0, 0, 0);
    const o = i * PENALTY_INFO_WORDS;
    const repetition = Math.fround(p.sampling.repetitionPenalty ?? 1);
    iu.set([i, first, e.ids.length, firstDraft, p.numDrafts], o);
    ifl.set([p.sampling.frequencyPenalty ?? 0, p.sampling.presencePenalty ?? 0, repetition, inverseRepetitionPenalty(repetition)], o + 5);
  });
  const out = await runKernel(
    'penalties',
    {},
    [new Uint32Array([positions.length, vocab, 0, 0]), logits, new Uint32Array(tokens.length > 0 ? tokens : [0, 0, 0, 0]), infos, new Uint32Array(entryWords.length > 0 ? entryWords : [0, 0, 0, 0])],
    [positions.length],
    [1],
  );
  return new Float32Array(out.get(1)!);
}

describe('penalties.wgsl', () => {
  it('writes the twin logits bit for bit: bias, penalties of every sign, drafts before verify positions', async () => {
    const vocab = 700;
    const random = mulberry32(11);
    const int = (n: number) => Math.floor(random() * n);
    const positions: PenalizedPosition[] = [];
    for (let i = 0; i < 12; i++) {
      const numPromptTokens = 5 + int(60);
      const tokens = Array.from({ length: numPromptTokens + int(40) }, () => int(i % 2 ? 40 : vocab)); // some rows repeat a few ids a lot
      const drafts = Array.from({ length: int(5) }, () => (random() < 0.5 ? tokens[int(tokens.length)]! : int(vocab)));
      const sampling: SamplingParams = {
        temperature: 1,
        topK: 0,
        topP: 1,
        seed: i,
        frequencyPenalty: [0, 0.5, -1.25, 2][i % 4],
        presencePenalty: [0.75, 0, -2, 1.5][i % 4],
        repetitionPenalty: [1, 1.3, 0.8, 2.5][(i >> 1) % 4],
        ...(i % 3 === 0 ? { logitBias: { [int(vocab)]: 100, [int(vocab)]: -100, [tokens[0]!]: 3.5 } } : {}),
      };
      positions.push({ sampling, tokens, numPromptTokens, drafts, numDrafts: int(drafts.length + 1) });
    }
    const logits = seededFloats(3, positions.length * vocab, 6); // [positions, vocab]
    logits[5] = 0; // a zero logit: multiplied, not divided
    const gpu = await penalizeOnGpu(positions, logits, vocab);
    const twin = logits.slice();
    positions.forEach((p, i) => {
      applyPenalties(twin.subarray(i * vocab, (i + 1) * vocab), p.sampling, penaltyEntries(p.sampling, p.tokens, p.numPromptTokens, vocab), p.drafts.slice(0, p.numDrafts));
    });
    expect(bits(gpu)).toEqual(bits(twin));
    expect(twin).not.toEqual(logits);
  });
});

describe.each<KernelSetting>(['cpu', 'gpu'])("sample.wgsl's logprobs, the '%s' setting", (setting) => {
  it('match sampledLogprobs for greedy, gathered and fallback rows, top ids in rank order; rows without ask nothing', async () => {
    const vocab = 3000;
    const settings: Array<Omit<SamplingParams, 'seed'>> = [
      { temperature: 0, topK: 0, topP: 1, logprobs: 5 },
      { temperature: 0.7, topK: 40, topP: 0.9, logprobs: 20 },
      { temperature: 1.3, topK: 0, topP: 1, logprobs: 0 }, // the bisection fallback
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.9, topK: 100, topP: 1, logprobs: 1 },
    ];
    const rows: SampleRow[] = settings.map((s, i) => ({ logits: seededFloats(40 + i, vocab, 4), sampling: { ...s, seed: 9 + i }, pos: 4 + i }));
    rows[1]!.logits[17] = rows[1]!.logits[1234] = 12; // tied at the top: the lower id first
    const { ids, logprobs } = await sampleWithLogprobsOnGpu(rows, setting);
    expect(ids).toEqual(rows.map((r) => sampleToken(r.logits, r.sampling, r.pos)));
    rows.forEach((row, i) => {
      if (row.sampling.logprobs === undefined) return expect(logprobs[i]).toBeUndefined();
      const twin = sampledLogprobs(row.logits, row.sampling.temperature, ids[i]!, row.sampling.logprobs);
      const got = logprobs[i]!;
      expect(Array.from(got.topIds)).toEqual(Array.from(twin.topIds));
      expect(got.logprob).toBeCloseTo(twin.logprob, 5);
      got.topLogprobs.forEach((lp, t) => expect(lp).toBeCloseTo(twin.topLogprobs[t]!, 5));
    });
    expect(Array.from(logprobs[1]!.topIds.slice(0, 2))).toEqual([17, 1234]);
  });
});
