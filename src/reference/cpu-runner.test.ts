// Tests of the CPU forward and CpuRunner: chunked == one-shot prefill, batch invariance (bitwise,
// per KV storage type), limits. Not llama.cpp parity (llama-cpp/oracle.test.ts) and not the ops (ops.test.ts).
import { describe, expect, it } from 'vitest';
import { CpuRunner } from './cpu-runner';
import { naiveForward } from './testing/naive-forward';
import { syntheticModelDesc, TINY_SYNTH_DIMS } from '../model/testing/synthetic-model-fixtures';
import { sampleToken } from './sample';
import type { SamplingParams, StepPlan, StepRow } from '../engine/types';
import type { Arch } from '../model/desc';
import { KV_CACHE_TYPES } from '../engine/kv-types';

const greedy: SamplingParams = { temperature: 0, topK: 0, topP: 1, seed: 0 };
const prompt = (n: number, seed: number, vocab = 61): Int32Array =>
  Int32Array.from({ length: n }, (_, i) => (i * 17 + seed * 31 + ((i * i) % 7)) % vocab);

/** `plan` with as many tables per row as `runner` keeps KV cache groups. */
function forRunner(runner: CpuRunner, plan: StepPlan): StepPlan {
  return { ...plan, rows: plan.rows.map((r) => ({ ...r, blockTables: r.blockTables.slice(0, runner.kvGroups.length) })) };
}

/** A row; its second table (a sliding-window group's, read only by runners keeping one: gemma's here; see forRunner) holds the same ids. */
function row(sessionId: string, tokenIds: Int32Array, startPos: number, blocks: number[], sample = true, sampling = greedy): StepRow {
  return { sessionId, tokenIds, startPos, blockTables: [Int32Array.from(blocks), Int32Array.from(blocks)], sampling, sample };
}

/** Feed `tokens` in chunks of the given sizes as separate steps; return the last step's logits. */
function feedInChunks(runner: CpuRunner, tokens: Int32Array, chunkSizes: number[], blocks: number[]): Float32Array {
  let pos = 0;
  let logits: Float32Array = new Float32Array(0);
  for (const size of chunkSizes) {
    const isLast = pos + size === tokens.length;
    const detail = runner.executeDetailed(forRunner(runner, { stepIndex: 0, rows: [row('a', tokens.subarray(pos, pos + size), pos, blocks, isLast)] }));
    logits = detail.logits;
    pos += size;
  }
  expect(pos).toBe(tokens.length);
  return logits;
}

const variants: Array<{ arch: Arch; tied: boolean }> = [
  { arch: 'llama', tied: false },
  { arch: 'llama', tied: true },
  { arch: 'qwen2', tied: false },
  { arch: 'qwen3', tied: true },
  // gemma: windows of 16 positions (crossed by these prompts), caps, post-norms, GeGLU, local RoPE
  { arch: 'gemma2', tied: true },
  { arch: 'gemma3', tied: true },
];

describe.each(variants)('$arch (tied embeddings: $tied)', ({ arch, tied }) => {
  const model = syntheticModelDesc({ arch, tieWordEmbeddings: tied, seed: 3, dims: TINY_SYNTH_DIMS });

  it('agrees with a naive contiguous transformer (f32 KV: the naive forward keeps K/V in f32)', () => {
    const tokens = prompt(21, 1);
    const runner = new CpuRunner(model, { blockSize: 4, numBlocks: 16, kvCacheType: 'f32' });
    const logits = runner.executeDetailed(forRunner(runner, { stepIndex: 0, rows: [row('a', tokens, 0, [5, 2, 9, 1, 12, 3])] })).logits;
    const want = naiveForward(model, Array.from(tokens));
    want.forEach((w, i) => expect(logits[i]).toBeCloseTo(w, 4));
  });

  it('gives bitwise the same logits whether the prompt arrives in one chunk or in several steps', () => {
    const tokens = prompt(37, 2);
    const blocks = [3, 1, 7, 2, 5, 4, 6, 8, 9, 10];
    const oneShot = feedInChunks(new CpuRunner(model, { blockSize: 4, numBlocks: 16 }), tokens, [37], blocks);
    const chunked = feedInChunks(new CpuRunner(model, { blockSize: 4, numBlocks: 16 }), tokens, [5, 16, 1, 1, 14], blocks);
    expect(chunked).toEqual(oneShot);
  });
});

// headDim 16: numKvHeads * headDim = 32, one q8_0 block per token
const KV_TYPE_DIMS = { ...TINY_SYNTH_DIMS, headDim: 16 };

describe.each(KV_CACHE_TYPES)('%s KV', (kvCacheType) => {
  const model = syntheticModelDesc({ arch: 'qwen2', seed: 5, dims: KV_TYPE_DIMS });

  it('gives bitwise the same logits whether the prompt arrives in one chunk or in several steps', () => {
    const tokens = prompt(37, 2);
    const blocks = [3, 1, 7, 2, 5, 4, 6, 8, 9, 10];
    const oneShot = feedInChunks(new CpuRunner(model, { blockSize: 4, numBlocks: 16, kvCacheType }), tokens, [37], blocks);
    const chunked = feedInChunks(new CpuRunner(model, { blockSize: 4, numBlocks: 16, kvCacheType }), tokens, [5, 16, 1, 1, 14], blocks);
    expect(chunked).toEqual(oneShot);
  });

  it("gives a row bitwise the same logits alone and with other rows of any length in the step", async () => {
    const runner = new CpuRunner(model, { blockSize: 4, numBlocks: 40, kvCacheType });
    expect(runner.kvCacheType).toBe(kvCacheType);
    const a = prompt(10, 1), b = prompt(23, 2), c = prompt(6, 3);
    // solo: A prefills 10 tokens in blocks [1..3], then decodes 3 tokens
    const solo: Float32Array[] = [];
    let detail = runner.executeDetailed(forRunner(runner, { stepIndex: 0, rows: [row('a', a, 0, [1, 2, 3, 4])] }));
    solo.push(detail.logits);
    let next = detail.sampledIds[0];
    for (let i = 0; i < 3; i++) {
      detail = runner.executeDetailed(forRunner(runner, { stepIndex: 1 + i, rows: [row('a', Int32Array.of(next), 10 + i, [1, 2, 3, 4])] }));
      solo.push(detail.logits);
      next = detail.sampledIds[0];
    }

    // batched: C prefills first, A rides with B's prefill chunks and C's decodes, in other blocks
    const aBlocks = [20, 11, 30, 5], bBlocks = [12, 13, 14, 15, 16, 17, 18], cBlocks = [21, 22];
    runner.executeDetailed(forRunner(runner, { stepIndex: 10, rows: [row('c', c, 0, cBlocks)] }));
    const batched: Float32Array[] = [];
    detail = runner.executeDetailed(forRunner(runner, {
      stepIndex: 11,
      rows: [row('b', b.subarray(0, 9), 0, bBlocks, false), row('a', a, 0, aBlocks), row('c', Int32Array.of(4), 6, cBlocks)],
    }));
    batched.push(detail.logits.subarray(0, model.config.vocabSize));
    next = detail.sampledIds[1];
    for (let i = 0; i < 3; i++) {
      const rows = [row('a', Int32Array.of(next), 10 + i, aBlocks), row('b', b.subarray(9 + 4 * i, 13 + 4 * i), 9 + 4 * i, bBlocks)];
      if (i === 1) rows.reverse();
      detail = runner.executeDetailed(forRunner(runner, { stepIndex: 12 + i, rows }));
      const at = detail.sampleRows.indexOf(rows.findIndex((r) => r.sessionId === 'a'));
      batched.push(detail.logits.subarray(at * model.config.vocabSize, (at + 1) * model.config.vocabSize));
      next = detail.sampledIds[rows.findIndex((r) => r.sessionId === 'a')];
    }
    batched.forEach((logits, i) => expect(logits).toEqual(solo[i]));
    const result = await runner.execute(forRunner(runner, { stepIndex: 20, rows: [row('a', Int32Array.of(1), 13, aBlocks, false)] }));
    expect(Array.from(result.sampledIds)).toEqual([-1]);
  });
});

describe('CpuRunner', () => {
  const model = syntheticModelDesc({ arch: 'llama', seed: 9, dims: TINY_SYNTH_DIMS });

  it('samples at the position of the generated token with the row settings', () => {
    const runner = new CpuRunner(model, { blockSize: 4, numBlocks: 16 });
    const sampling = { temperature: 1.3, topK: 20, topP: 0.9, seed: 77 };
    const detail = runner.executeDetailed(forRunner(runner, { stepIndex: 0, rows: [row('a', prompt(7, 6), 0, [1, 2], true, sampling)] }));
    expect(detail.sampledIds[0]).toBe(sampleToken(detail.logits, sampling, 7));
  });

  it('rejects plans beyond its limits, block 0 and blocks outside the pool', () => {
    const runner = new CpuRunner(model, { blockSize: 4, numBlocks: 8, maxTokensPerStep: 8, maxRows: 2 });
    const step = (rows: StepRow[]) => () => runner.executeDetailed(forRunner(runner, { stepIndex: 0, rows }));
    expect(step([row('a', prompt(9, 1), 0, [1, 2, 3])])).toThrow(/maxTokensPerStep/);
    expect(step([row('a', prompt(1, 1), 0, [1]), row('b', prompt(1, 1), 0, [2]), row('c', prompt(1, 1), 0, [3])])).toThrow(/maxRows/);
    expect(step([row('a', prompt(2, 1), 0, [0])])).toThrow(/block 0/);
    expect(step([row('a', prompt(2, 1), 0, [8])])).toThrow(/block 8/);
    runner.dispose();
    expect(step([row('a', prompt(2, 1), 0, [1])])).toThrow(/dispose/);
  });

  it('stores f16 KV by default and refuses a type the model cannot store', () => {
    expect(new CpuRunner(model, { numBlocks: 8 }).kvCacheType).toBe('f16');
    // numKvHeads * headDim = 16: not a whole q8_0 block
    expect(() => new CpuRunner(model, { numBlocks: 8, kvCacheType: 'q8_0' })).toThrow(/kvCacheType q8_0: .*multiple of 32/);
  });
});
