// Masks filled during the step (StepMaskFill): GpuRunner's two submissions (the forward, then the
// masks and the sampling) and CpuRunner's fill between forward and sampling give the ids the
// masks give when they are in the plan from the start; a fill that fails fails only its step.
import { beforeAll, describe, expect, it } from 'vitest';
import { maskAllows, maskWords } from '../engine/constraints';
import { mulberry32 } from '../engine/seeded-random';
import type { ModelRunner, StepMaskFill, StepPlan, StepResult, StepRow } from '../engine/types';
import type { ModelDesc } from '../model/desc';
import { CpuRunner } from '../reference/cpu-runner';
import { randomByteModel } from '../reference/testing/constrained-engine.node';
import { testGpuRunner } from './testing/runner-fixtures';

let model: ModelDesc;
beforeAll(() => {
  model = randomByteModel();
});

const VOCAB = 259;
const WORDS = maskWords(VOCAB);
const CONSTRAINED = [0, 2];

/** A mask per sampled position allowing about a fifth of the ids, seeded by step, row and position. */
function masksFor(stepIndex: number, r: number, positions: number): Int32Array {
  const random = mulberry32(1000 * stepIndex + r + 1);
  const mask = new Int32Array(positions * WORDS);
  for (let p = 0; p < positions; p++) for (let id = 0; id < VOCAB; id++) if (random() < 0.2) mask[p * WORDS + (id >> 5)]! |= 1 << (id & 31);
  return mask;
}

/** Three steps of 4 rows: a prefill each, then decode with 2 drafts on every row of the last step. */
function plans(): StepPlan[] {
  const prompt = (r: number) => Int32Array.from({ length: 5 + r }, (_, i) => (r * 37 + i * 11) % VOCAB);
  const rows = (stepIndex: number, tokens: (r: number) => Int32Array, startPos: (r: number) => number, drafts: number): StepRow[] =>
    [0, 1, 2, 3].map((r) => ({ sessionId: `s${r}`, tokenIds: tokens(r), startPos: startPos(r), blockTables: [Int32Array.of(1 + 2 * r, 2 + 2 * r)], sampling: { temperature: 1, topK: 0, topP: 1, seed: 40 + r + stepIndex }, sample: true, ...(drafts > 0 ? { numDraftTokens: drafts } : {}) }));
  return [
    { stepIndex: 0, rows: rows(0, prompt, () => 0, 0) },
    { stepIndex: 1, rows: rows(1, (r) => Int32Array.of(7 + r), (r) => 5 + r, 0) },
    { stepIndex: 2, rows: rows(2, (r) => Int32Array.of(9 + r, 3, 4), (r) => 6 + r, 2) },
  ];
}

const positionsOf = (row: StepRow) => 1 + (row.numDraftTokens ?? 0);

/** Runs the plans with the masks in them from the start, or filled through StepMaskFill. */
async function run(runner: ModelRunner, during: boolean): Promise<{ results: StepResult[]; fills: number }> {
  const results: StepResult[] = [];
  let fills = 0;
  for (const plan of plans()) {
    const fill = () => {
      for (const r of CONSTRAINED) plan.rows[r]!.tokenBitmask = masksFor(plan.stepIndex, r, positionsOf(plan.rows[r]!));
    };
    if (!during) {
      fill();
      results.push(await runner.execute(plan));
      continue;
    }
    const masks: StepMaskFill = { rows: CONSTRAINED, fill: () => (fills++, fill(), Promise.resolve()) };
    results.push(await runner.execute(plan, masks));
  }
  return { results, fills };
}

/** Every constrained position sampled an id its mask allows. */
function expectAllowed(results: StepResult[]): void {
  plans().forEach((plan, s) => {
    let draftOffset = 0;
    plan.rows.forEach((row, r) => {
      const k = row.numDraftTokens ?? 0;
      const ids = [results[s]!.sampledIds[r]!, ...(results[s]!.draftSampledIds?.subarray(draftOffset, draftOffset + k) ?? [])];
      draftOffset += k;
      if (!CONSTRAINED.includes(r)) return;
      const mask = masksFor(plan.stepIndex, r, positionsOf(row));
      ids.forEach((id, p) => expect(maskAllows(mask, p * WORDS, id), `step ${s} row ${r} position ${p}: id ${id}`).toBe(true));
    });
  });
}

describe('masks filled during the step', () => {
  it("GpuRunner: the forward and the sampling submitted apart give the ids of one submission", async () => {
    const whole = await testGpuRunner(model, { maxDraftTokens: 2 });
    const split = await testGpuRunner(model, { maxDraftTokens: 2 });
    try {
      const a = await run(whole, false);
      const b = await run(split, true);
      expect(b.fills).toBe(3);
      expect(b.results.map((r) => [...r.sampledIds])).toEqual(a.results.map((r) => [...r.sampledIds]));
      expect(b.results.map((r) => [...(r.draftSampledIds ?? [])])).toEqual(a.results.map((r) => [...(r.draftSampledIds ?? [])]));
      expectAllowed(b.results);
    } finally {
      whole.dispose();
      split.dispose();
    }
  });

  it('CpuRunner: the fill between forward and sampling gives the ids of masks given up front', async () => {
    const a = await run(new CpuRunner(model, { numBlocks: 16, maxDraftTokens: 2 }), false);
    const b = await run(new CpuRunner(model, { numBlocks: 16, maxDraftTokens: 2 }), true);
    expect(b.fills).toBe(3);
    expect(b.results).toEqual(a.results);
    expectAllowed(b.results);
  });

  it('GpuRunner: a fill that fails fails its step, and the next step runs', async () => {
    const runner = await testGpuRunner(model, { maxDraftTokens: 2 });
    try {
      const [first, second] = plans();
      await expect(runner.execute(first!, { rows: CONSTRAINED, fill: () => Promise.reject(new Error('matcher gone')) })).rejects.toThrow('matcher gone');
      await expect(runner.execute(first!, { rows: CONSTRAINED, fill: () => Promise.resolve() })).rejects.toThrow(/tokenBitmask of 0 words after the fill/);
      const result = await runner.execute(second!);
      expect(result.sampledIds).toHaveLength(4);
    } finally {
      runner.dispose();
    }
  });
});
