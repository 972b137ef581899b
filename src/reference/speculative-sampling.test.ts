// Speculative decoding under temperature/top-k/top-p keeps the target distribution: a drafted token x
// is accepted with probability p(x), a rejected one is replaced by a draw from p without x, and the
// output matches plain sampling — checked with chi-square over many seeds on a 6-token vocabulary.
import { describe, expect, it } from 'vitest';
import { sampleToken } from './sample';
import { EngineCore } from '../engine/engine-core';
import type { StepEvent } from '../engine/events';
import type { ChatTemplate, ModelRunner, SamplingParams, StepPlan, StepResult, Tokenizer } from '../engine/types';

const VOCAB = 6;
const EOS = 99; // never sampled: turns end at maxNewTokens
/** The same logits at every position: the target distribution p is known exactly. */
const LOGITS = Float32Array.from([2.0, 1.4, 1.1, 0.5, 0.0, -0.7]);

const tokenizer: Tokenizer = { eosTokenIds: [EOS], encode: () => [], decode: (ids) => Array.from(ids, (id) => String.fromCharCode(97 + id)).join('') };
const template: ChatTemplate = { render: () => '' };

interface Verdict {
  draft: number;
  sampled: number;
}

/** Samples from LOGITS at each position (sampleToken, keyed by position); records every draft's verdict. */
class TableRunner implements ModelRunner {
  readonly blockSize = 4;
  readonly kvGroups = [{ numBlocks: 64, window: null }];
  readonly maxTokensPerStep = 256;
  readonly maxRows = 8;
  readonly maxDraftTokens = 4;
  readonly verdicts: Verdict[] = [];

  execute(plan: StepPlan): Promise<StepResult> {
    const sampledIds = new Int32Array(plan.rows.length).fill(-1);
    const draftSampledIds: number[] = [];
    plan.rows.forEach((row, r) => {
      if (!row.sample) return;
      const k = row.numDraftTokens ?? 0;
      const end = row.startPos + row.tokenIds.length; // position after the last fed token
      const ids = Array.from({ length: k + 1 }, (_, j) => sampleToken(LOGITS, row.sampling, end - k + j));
      sampledIds[r] = ids[0];
      draftSampledIds.push(...ids.slice(1));
      // the drafts the scheduler's rule tests: each up to and including the first mismatch
      for (let j = 0; j < k; j++) {
        const draft = row.tokenIds[row.tokenIds.length - k + j];
        this.verdicts.push({ draft, sampled: ids[j] });
        if (ids[j] !== draft) break;
      }
    });
    return Promise.resolve({ sampledIds, draftSampledIds: Int32Array.from(draftSampledIds) });
  }

  dispose(): void {}
}

/** p over ids after the temperature, top-k and top-p cuts of sampleToken (rank order, same sums). */
function targetDistribution(params: SamplingParams): number[] {
  const ranked = Array.from({ length: VOCAB }, (_, i) => i).sort((a, b) => LOGITS[b] - LOGITS[a] || a - b);
  let kept = params.topK > 0 ? Math.min(params.topK, VOCAB) : VOCAB;
  const w = ranked.slice(0, kept).map((id) => Math.exp((LOGITS[id] - LOGITS[ranked[0]]) / params.temperature));
  let total = w.reduce((a, b) => a + b, 0);
  if (params.topP < 1) {
    let running = 0;
    let r = 0;
    for (; r < kept; r++) if ((running += w[r]) >= params.topP * total) break;
    kept = Math.min(r + 1, kept);
    total = w.slice(0, kept).reduce((a, b) => a + b, 0);
  }
  const p = new Array<number>(VOCAB).fill(0);
  for (let r = 0; r < kept; r++) p[ranked[r]] = w[r] / total;
  return p;
}

/** Pearson's statistic of counts against probabilities (cells with p = 0 must be empty). */
function chiSquare(counts: number[], p: number[]): { statistic: number; df: number } {
  const n = counts.reduce((a, b) => a + b, 0);
  let statistic = 0;
  let df = -1;
  counts.forEach((c, i) => {
    if (p[i] === 0) {
      expect(c, `id ${i} has probability 0`).toBe(0);
      return;
    }
    statistic += (c - n * p[i]) ** 2 / (n * p[i]);
    df++;
  });
  return { statistic, df };
}

/** Chi-square quantiles at 0.999 by degrees of freedom: a correct sampler fails 1 in 1,000 seeds' suites. */
const CHI2_999 = [NaN, 10.83, 13.82, 16.27, 18.47, 20.52];

async function sample(params: Omit<SamplingParams, 'seed'>, speculate: boolean, numSeeds: number): Promise<{ outputs: number[][]; runner: TableRunner; numAccepted: number }> {
  const runner = new TableRunner();
  const engine = new EngineCore({ runner, tokenizer, chatTemplate: template, manualSteps: true });
  const outputs: number[][] = [];
  let numAccepted = 0;
  engine.subscribe((e: StepEvent) => e.rows.forEach((r) => (numAccepted += r.numAccepted ?? 0)));
  for (let seed = 0; seed < numSeeds; seed++) {
    // the prediction (always token 0, the likeliest) drafts while the output follows it, prompt lookup after
    const id = engine.createSession({
      maxNewTokens: 12,
      sampling: params,
      seed,
      speculation: speculate ? { maxDraftTokens: 4 } : 'off',
      predictionTokenIds: new Array<number>(12).fill(0),
    });
    engine.send(id, [1, 2, 3, 1, 2]);
    while (await engine.step());
    outputs.push((await engine.waitForTurn(id)).outputTokenIds);
    engine.closeSession(id);
  }
  return { outputs, runner, numAccepted };
}

describe('speculative sampling keeps the target distribution', () => {
  it.each([
    { temperature: 1, topK: 0, topP: 1 },
    { temperature: 0.7, topK: 4, topP: 0.9 },
  ])('accepts x with p(x), resamples from p without x, outputs like plain sampling (%o)', async (params) => {
    const p = targetDistribution({ ...params, seed: 0 });
    const spec = await sample(params, true, 600);
    const plain = await sample(params, false, 600);
    // same seed and same drafts: the same output, and that output is plain sampling's
    expect(spec.outputs).toEqual(plain.outputs);
    expect(spec.runner.verdicts.filter((v) => v.sampled === v.draft).length).toBe(spec.numAccepted);

    // every output token, drafted or not, is distributed as p
    const counts = new Array<number>(VOCAB).fill(0);
    for (const out of spec.outputs) for (const id of out) counts[id]++;
    const all = chiSquare(counts, p);
    expect(all.statistic).toBeLessThan(CHI2_999[all.df]);

    // a draft x is accepted with probability p(x): a z-test per drafted id seen often enough
    let numTested = 0;
    for (let x = 0; x < VOCAB; x++) {
      const tested = spec.runner.verdicts.filter((v) => v.draft === x);
      if (tested.length < 200) continue;
      numTested++;
      const rate = tested.filter((v) => v.sampled === x).length / tested.length;
      const sd = Math.sqrt((p[x] * (1 - p[x])) / tested.length);
      expect(Math.abs(rate - p[x]), `draft ${x}: accepted ${rate}, p ${p[x]}`).toBeLessThan(3.3 * sd + 1e-12);
      // and when it is rejected, the token taken instead is drawn from p without x, renormalized
      const rejected = new Array<number>(VOCAB).fill(0);
      for (const v of tested) if (v.sampled !== x) rejected[v.sampled]++;
      const residual = p.map((q, i) => (i === x ? 0 : q / (1 - p[x])));
      const r = chiSquare(rejected, residual);
      expect(r.statistic, `rejections of draft ${x}`).toBeLessThan(CHI2_999[r.df]);
    }
    expect(numTested).toBeGreaterThanOrEqual(1);
  });
});
