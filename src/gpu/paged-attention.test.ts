// Parity of shaders/paged_attention.wgsl with pagedAttention on mixed steps (decode rows and
// prefill chunks, scattered blocks, GQA, long contexts split over workgroups, sliding windows with
// soft-capped scores, headDim 256), batch invariance and chunking invariance (bitwise), per KV
// storage type and per kernel setting's shape. The cache is filled by the kvWrite twin (rounding to the type)
// and handed to the GPU in the pool's words; keys before a window hold NaN, so a read of one shows.
import { describe, expect, it } from 'vitest';
import type { StepPlan, StepRow } from '../engine/types';
import { KV_CACHE_TYPES, kvCacheTypeProblem, type KvCacheType } from '../engine/kv-types';
import { roundKvValues } from '../reference/kv-rounding';
import { kvWrite, pagedAttention, plainScoring, slotMapping, windowStart, type AttentionLayout, type AttentionScoring } from '../reference/ops';
import { attentionGrid, attentionLanes, attentionMergeOverrides, attentionShape, attentionShapeOverrides, KV_TYPE_CODE, type AttentionShape } from './kernels';
import { kvLayerLayout } from './kv-arena';
import { encodeKvWords } from './testing/kv-words';
import { runPasses, type Pass } from './testing/kernel-harness';
import { ATTENTION_ITEM_WORDS, ROW_INFO_WORDS, StepMeta, TOKEN_INFO_WORDS } from './step-meta';
import { bits, scaledError, seededFloats } from './testing/test-util';

/** Online softmax in f32 (tiles of 16 keys, merged splits) vs the twin's two-pass f64 softmax. */
/** A row with its one KV cache group's table, as slotMapping (the twin's) reads it. */
const firstTable = (row: StepRow) => ({ ...row, blockTable: row.blockTables[0]! });

const ATTENTION_TOLERANCE = 1e-5;

const BLOCK_SIZE = 4;
const NUM_BLOCKS = 1024;
const MAX_TOKENS = 128;
const NUM_HEADS = 4;
const NUM_KV_HEADS = 2;
const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };

/** Rows as (startPos, numTokens); blocks handed out from a shuffled pool so tables scatter. */
function makePlan(shapes: Array<[number, number]>): StepPlan {
  const pool = Array.from({ length: NUM_BLOCKS - 1 }, (_, i) => i + 1);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = (i * 7919 + 13) % (i + 1);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  const rows: StepRow[] = shapes.map(([startPos, n], r) => ({
    sessionId: `s${r}`,
    tokenIds: new Int32Array(n),
    startPos,
    blockTables: [Int32Array.from(pool.splice(0, Math.ceil((startPos + n) / BLOCK_SIZE)))],
    sampling,
    sample: true,
  }));
  return { stepIndex: 0, rows };
}

interface Heads {
  numHeads: number;
  numKvHeads: number;
}
const GQA: Heads = { numHeads: NUM_HEADS, numKvHeads: NUM_KV_HEADS };

const MAX_POSITIONS = NUM_BLOCKS * BLOCK_SIZE;
/** Both settings' shapes, and the gpu one with narrow splits widened past 4 (a 2,101-key query: 4 splits of 528 keys). */
const SHAPES: Array<[string, AttentionShape]> = [
  ['gpu', attentionShape('gpu', MAX_POSITIONS)],
  ['cpu', attentionShape('cpu', MAX_POSITIONS)],
  ['gpu, widened splits', { ...attentionShape('gpu', MAX_POSITIONS), splitKeys: 16, maxSplits: 4 }],
];

interface Step {
  kvCacheType: KvCacheType;
  shape: AttentionShape;
  plan: StepPlan;
  meta: StepMeta;
  heads: Heads;
  headDim: number;
  scoring: AttentionScoring;
  q: Float32Array; // [numTokens, numHeads, headDim]
  k: Float32Array; // [numTokens, kvDim]
  v: Float32Array; // [numTokens, kvDim]
}

/** scoring: scale, soft-cap and window (default llama's: 1 / sqrt(headDim), none, none). */
function makeStep(kvCacheType: KvCacheType, shape: AttentionShape, plan: StepPlan, headDim: number, seed: number, heads: Heads = GQA, scoring = plainScoring(headDim)): Step {
  const meta = new StepMeta({ maxTokens: MAX_TOKENS, maxRows: 16, blockSize: BLOCK_SIZE, kvGroups: [{ numBlocks: NUM_BLOCKS, window: null }], maxPositions: MAX_POSITIONS, vocabSize: 1, attentionSplits: shape, attentionQueriesPerItem: attentionLanes(heads.numHeads, heads.numKvHeads).queriesPerItem });
  meta.pack(plan);
  const kvDim = heads.numKvHeads * headDim;
  const T = meta.numTokens;
  return { kvCacheType, shape, plan, meta, heads, headDim, scoring, q: seededFloats(seed, T * heads.numHeads * headDim, 2), k: seededFloats(seed + 1, T * kvDim), v: seededFloats(seed + 2, T * kvDim) };
}

/** The step's K/V written into the cache by the twin kvWrite, then paged_attention's two passes on the GPU. */
async function runOnGpu(step: Step, kvBefore: Float32Array): Promise<{ kv: Float32Array; out: Float32Array }> {
  const { meta, headDim, kvCacheType, shape } = step;
  const { numHeads, numKvHeads } = step.heads;
  const T = meta.numTokens;
  const kvDim = numKvHeads * headDim;
  const half = NUM_BLOCKS * BLOCK_SIZE * kvDim;
  const vOffset = kvLayerLayout(kvCacheType, NUM_BLOCKS * BLOCK_SIZE, kvDim).vOffsetWords;
  const tables = meta.blockTables[0]!.slice(0, meta.numBlockTableEntries);
  const kv = Float32Array.from(kvBefore.subarray(0, 2 * half));
  kvWrite(step.k, step.v, slotMapping(step.plan.rows.map(firstTable), BLOCK_SIZE), kvDim, kv.subarray(0, half), kv.subarray(half), kvCacheType);
  const params = (numItems: number): ArrayBuffer => {
    const bytes = new ArrayBuffer(48);
    new Uint32Array(bytes).set([numItems, numHeads, numKvHeads, headDim, BLOCK_SIZE, kvDim, vOffset, 0, shape.splitKeys, shape.maxSplits, 0, step.scoring.window]);
    new Float32Array(bytes)[7] = step.scoring.scale;
    new Float32Array(bytes)[10] = step.scoring.softcap;
    return bytes;
  };
  const numItems = meta.numAttentionItems;
  const numMerges = meta.numMergeItems;
  const grid = (pass: 'main' | 'merge', n: number): [number, number] => {
    const out = [0, 0];
    attentionGrid(pass, n, shape, numHeads, numKvHeads, out);
    return [out[0]!, out[1]!];
  };
  const data = [
    params(numItems), // 0
    meta.rowInfo.slice(0, meta.numRows * ROW_INFO_WORDS), // 1
    meta.attentionItems.slice(0, numItems * ATTENTION_ITEM_WORDS), // 2
    tables, // 3
    step.q, // 4
    encodeKvWords(kvCacheType, kv.subarray(0, half), kv.subarray(half), kvDim), // 5
    new Float32Array(T * numHeads * headDim), // 6: out
    new Float32Array(T * numHeads * shape.maxSplits * (2 + headDim)), // 7: split states
    params(numMerges), // 8
    meta.mergeItems.slice(0, numMerges * ATTENTION_ITEM_WORDS), // 9
  ];
  const overrides = { KV_TYPE: KV_TYPE_CODE[kvCacheType], SOFTCAP: step.scoring.softcap > 0 ? 1 : 0, ...attentionShapeOverrides(shape) };
  const passes: Pass[] = [
    { kernel: 'paged_attention', overrides, workgroups: grid('main', numItems), bind: [0, 1, 2, 3, 4, 5, 6, 7] },
    { kernel: 'paged_attention_merge', overrides: attentionMergeOverrides(shape), workgroups: grid('merge', numMerges), bind: [8, 1, 9, 3, 4, 5, 6, 7] },
  ];
  const attended = await runPasses(data, passes, [6]);
  return { kv, out: new Float32Array(attended.get(6)!) };
}

function runOnCpu(step: Step, kvBefore: Float32Array): { kv: Float32Array; out: Float32Array } {
  const { plan, meta, headDim } = step;
  const { numHeads, numKvHeads } = step.heads;
  const T = meta.numTokens;
  const kvDim = numKvHeads * headDim;
  const half = NUM_BLOCKS * BLOCK_SIZE * kvDim;
  const kCache = kvBefore.slice(0, half);
  const vCache = kvBefore.slice(half, 2 * half);
  kvWrite(step.k, step.v, slotMapping(plan.rows.map(firstTable), BLOCK_SIZE), kvDim, kCache, vCache, step.kvCacheType);
  const maxBlocksPerRow = Math.max(...plan.rows.map((row) => row.blockTables[0]!.length));
  const blockTables = new Int32Array(plan.rows.length * maxBlocksPerRow);
  plan.rows.forEach((row, r) => blockTables.set(row.blockTables[0]!, r * maxBlocksPerRow));
  const layout: AttentionLayout = {
    numHeads,
    numKvHeads,
    headDim,
    blockSize: BLOCK_SIZE,
    positions: Int32Array.from({ length: T }, (_, t) => meta.tokens[t * TOKEN_INFO_WORDS + 1]!),
    tokenRows: Int32Array.from({ length: T }, (_, t) => meta.tokens[t * TOKEN_INFO_WORDS + 2]!),
    blockTables,
    maxBlocksPerRow,
  };
  const out = new Float32Array(T * numHeads * headDim);
  pagedAttention(step.q, T, kCache, vCache, layout, out, step.scoring);
  const kv = new Float32Array(2 * half);
  kv.set(kCache);
  kv.set(vCache, half);
  return { kv, out };
}

/** headDim 16, or 32 where q8_0 needs numKvHeads * headDim to fill blocks of 32. */
function headDimFor(type: KvCacheType, heads: Heads): number {
  return kvCacheTypeProblem(type, heads.numKvHeads * 16) ? 32 : 16;
}

/** [n] older K/V values (K then V) as `type` stores them. */
function historyOf(type: KvCacheType, seed: number, n: number): Float32Array {
  const x = seededFloats(seed, n);
  roundKvValues(type, x, 0, n, x, 0);
  return x;
}

const CASES = KV_CACHE_TYPES.flatMap((kvCacheType) => SHAPES.map(([name, shape]) => [kvCacheType, name, shape] as const));

describe.each(CASES)('paged_attention.wgsl, %s KV, %s shape', (kvCacheType, _name, shape) => {
  // decode at 37 (two splits), a fresh 9-token prefill, a chunk at 70 (three splits), decode at 3
  const shapes: Array<[number, number]> = [[37, 1], [0, 9], [70, 5], [3, 1]];

  for (const headDim of [16, 80]) {
    it(`headDim ${headDim}: attends like pagedAttention`, async () => {
      const step = makeStep(kvCacheType, shape, makePlan(shapes), headDim, 5);
      const history = historyOf(kvCacheType, 99, 2 * NUM_BLOCKS * BLOCK_SIZE * NUM_KV_HEADS * headDim); // older positions
      const gpu = await runOnGpu(step, history);
      const cpu = runOnCpu(step, history);
      expect(scaledError(gpu.out, cpu.out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
    });
  }

  // MHA (one head a quad), group 3 (quads of 4 heads, one lane unused), group 8 (two quads per kv head)
  for (const heads of [{ numHeads: 3, numKvHeads: 3 }, { numHeads: 6, numKvHeads: 2 }, { numHeads: 8, numKvHeads: 1 }]) {
    it(`${heads.numHeads} heads over ${heads.numKvHeads} kv heads: attends like pagedAttention, batch-invariantly`, async () => {
      const headDim = headDimFor(kvCacheType, heads);
      const history = historyOf(kvCacheType, 97, 2 * NUM_BLOCKS * BLOCK_SIZE * heads.numKvHeads * headDim);
      const step = makeStep(kvCacheType, shape, makePlan([[40, 1], [0, 70], [3, 1], [65, 7]]), headDim, 11, heads);
      const gpu = await runOnGpu(step, history);
      expect(scaledError(gpu.out, runOnCpu(step, history).out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
      const solo = await runOnGpu(subStep(step, [3], 72), gpu.kv);
      const rowLen = 7 * heads.numHeads * headDim;
      expect(bits(solo.out.slice(0, rowLen))).toEqual(bits(gpu.out.slice(72 * heads.numHeads * headDim, 72 * heads.numHeads * headDim + rowLen)));
    });
  }

  // a decode row over many rounds of splits, a 70-token chunk (several work items) crossing splits,
  // a decode row at a split boundary, a short chunk
  it('attends like pagedAttention at long contexts and long chunks', async () => {
    const headDim = 16;
    const step = makeStep(kvCacheType, shape, makePlan([[2100, 1], [30, 70], [511, 1], [1000, 3]]), headDim, 21);
    const history = historyOf(kvCacheType, 98, 2 * NUM_BLOCKS * BLOCK_SIZE * NUM_KV_HEADS * headDim);
    const gpu = await runOnGpu(step, history);
    const cpu = runOnCpu(step, history);
    expect(scaledError(gpu.out, cpu.out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
  });

  // long decode rows (2,101 keys: 9 splits of 256 in the gpu shape, 4 of 528 widened; 601: 3) beside
  // a chunk and a row at one split's end: like pagedAttention, and each row bitwise alone
  for (const heads of [GQA, { numHeads: 3, numKvHeads: 3 }, { numHeads: 8, numKvHeads: 1 }]) {
    it(`long rows split over workgroups (${heads.numHeads} heads over ${heads.numKvHeads}): attend like pagedAttention, bitwise as each row alone`, async () => {
      const headDim = headDimFor(kvCacheType, heads);
      const history = historyOf(kvCacheType, 96, 2 * NUM_BLOCKS * BLOCK_SIZE * heads.numKvHeads * headDim);
      const step = makeStep(kvCacheType, shape, makePlan([[2100, 1], [30, 70], [255, 1], [600, 1]]), headDim, 23, heads);
      const splitItems = Array.from({ length: step.meta.numAttentionItems }, (_, i) => step.meta.attentionItems[i * ATTENTION_ITEM_WORDS + 2]!).filter((split) => split > 0);
      expect(splitItems.length > 0).toBe(shape.maxSplits > 1); // some query split, in a shape that splits
      const gpu = await runOnGpu(step, history);
      expect(scaledError(gpu.out, runOnCpu(step, history).out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
      const rowLen = heads.numHeads * headDim;
      for (const [r, at] of [[0, 0], [3, 72]] as const) {
        const solo = await runOnGpu(subStep(step, [r], at), gpu.kv);
        expect(bits(solo.out.slice(0, rowLen))).toEqual(bits(gpu.out.slice(at * rowLen, (at + 1) * rowLen)));
      }
    });
  }

  // gemma: sliding windows (24 keys: mid-tile, mid-split; 100: several splits) with soft-capped
  // scores; MHA puts four queries, so four window starts, in one invocation
  for (const [window, heads] of [[24, GQA], [100, GQA], [24, { numHeads: 3, numKvHeads: 3 }]] as const) {
    it(`window ${window}, ${heads.numHeads} heads over ${heads.numKvHeads}, soft-capped: attends like pagedAttention, reading no key before a window`, async () => {
      const headDim = headDimFor(kvCacheType, heads);
      const kvDim = heads.numKvHeads * headDim;
      const history = historyOf(kvCacheType, 95, 2 * NUM_BLOCKS * BLOCK_SIZE * kvDim);
      const poisoned = poisonBeforeWindows(makePlan([[37, 1], [0, 9], [70, 5], [3, 1], [100, 40], [300, 1]]), window, history, kvDim);
      const step = makeStep(kvCacheType, shape, poisoned.plan, headDim, 41, heads, windowed(headDim, window));
      const gpu = await runOnGpu(step, poisoned.history);
      expect(scaledError(gpu.out, runOnCpu(step, poisoned.history).out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
    });
  }

  it('headDim 256 (gemma), plain and windowed: attends like pagedAttention', async () => {
    const headDim = 256;
    const kvDim = NUM_KV_HEADS * headDim;
    const history = historyOf(kvCacheType, 94, 2 * NUM_BLOCKS * BLOCK_SIZE * kvDim);
    for (const scoring of [plainScoring(headDim), windowed(headDim, 50)]) {
      const poisoned = poisonBeforeWindows(makePlan([[37, 1], [0, 9], [70, 5], [600, 1]]), scoring.window, history, kvDim);
      const step = makeStep(kvCacheType, shape, poisoned.plan, headDim, 43, GQA, scoring);
      const gpu = await runOnGpu(step, poisoned.history);
      expect(scaledError(gpu.out, runOnCpu(step, poisoned.history).out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
    }
  });

  // a window of 100 leaves the 2,101-key row 2 of its 9 splits of 256 (1 of 4 widened); one of 700, 4 (2)
  for (const window of [100, 700]) {
    it(`long rows in a window of ${window}: like pagedAttention, reading no key before it, bitwise as each row alone`, async () => {
      const headDim = headDimFor(kvCacheType, GQA);
      const kvDim = NUM_KV_HEADS * headDim;
      const history = historyOf(kvCacheType, 93, 2 * NUM_BLOCKS * BLOCK_SIZE * kvDim);
      const poisoned = poisonBeforeWindows(makePlan([[2100, 1], [30, 70], [511, 1], [600, 1]]), window, history, kvDim);
      const step = makeStep(kvCacheType, shape, poisoned.plan, headDim, 23, GQA, windowed(headDim, window));
      const gpu = await runOnGpu(step, poisoned.history);
      expect(scaledError(gpu.out, runOnCpu(step, poisoned.history).out)).toBeLessThanOrEqual(ATTENTION_TOLERANCE);
      const rowLen = NUM_HEADS * headDim;
      const solo = await runOnGpu(subStep(step, [0], 0), gpu.kv);
      expect(bits(solo.out.slice(0, rowLen))).toEqual(bits(gpu.out.slice(0, rowLen)));
    });
  }

  // plain, and a window of 9 (lanes of one invocation then start at different keys) with capped scores
  for (const [name, scoring] of [['plain', plainScoring(16)], ['windowed, capped', windowed(16, 9)]] as const) {
    it(`${name}: gives a row's tokens bitwise the same output in one chunk, in two chunks and one at a time`, async () => {
      const headDim = 16;
      const kvDim = NUM_KV_HEADS * headDim;
      const [startPos, n] = [25, 12]; // crosses the split boundary at 32
      const blockTable = Int32Array.from({ length: Math.ceil((startPos + n) / BLOCK_SIZE) }, (_, b) => 3 + 2 * b);
      const q = seededFloats(31, n * NUM_HEADS * headDim, 2);
      const k = seededFloats(32, n * kvDim);
      const v = seededFloats(33, n * kvDim);
      const history = historyOf(kvCacheType, 34, 2 * NUM_BLOCKS * BLOCK_SIZE * kvDim);
      /** The row's tokens as consecutive rows of the given lengths, all on the row's block table. */
      const chunked = (lengths: number[]): Step => {
        let at = 0;
        const rows: StepRow[] = lengths.map((len, r) => {
          const row = { sessionId: `c${r}`, tokenIds: new Int32Array(len), startPos: startPos + at, blockTables: [blockTable], sampling, sample: true };
          at += len;
          return row;
        });
        const step = makeStep(kvCacheType, shape, { stepIndex: 0, rows }, headDim, 0, GQA, scoring);
        return { ...step, q, k, v };
      };
      const whole = (await runOnGpu(chunked([n]), history)).out;
      expect(bits((await runOnGpu(chunked([5, 7]), history)).out)).toEqual(bits(whole));
      expect(bits((await runOnGpu(chunked(Array.from({ length: n }, () => 1)), history)).out)).toEqual(bits(whole));
    });

    it(`${name}: gives a row bitwise the same output alone and in cohorts of 2, 5, 8, 16 rows`, async () => {
      const headDim = 16;
      const history = historyOf(kvCacheType, 7, 2 * NUM_BLOCKS * BLOCK_SIZE * NUM_KV_HEADS * headDim);
      const full = makeStep(kvCacheType, shape, makePlan([[3, 2], [20, 1], [70, 5], [1, 3], [9, 1], [44, 1], [0, 4], [12, 1], [5, 1], [2, 1], [31, 1], [6, 2], [8, 1], [15, 1], [4, 1], [10, 1]]), headDim, 3, GQA, scoring);
      const probeRow = 2; // the 5-token chunk at position 70, tokens 3..7 of the step
      const { kv } = await runOnGpu(full, history);
      const probeStart = 3;
      const probeLen = 5 * NUM_HEADS * headDim;
      const solo = full.plan.rows[probeRow]!;
      const expected = (await runOnGpu(subStep(full, [probeRow], probeStart), kv)).out;
      for (const cohort of [2, 5, 8, 16]) {
        const rowIds = Array.from({ length: cohort }, (_, i) => i).filter((r) => r !== probeRow).slice(0, cohort - 1);
        rowIds.splice(Math.min(cohort - 1, 1 + (cohort >> 1)), 0, probeRow);
        const sub = subStep(full, rowIds, probeStart);
        const at = sub.probeOffset * NUM_HEADS * headDim;
        const { out } = await runOnGpu(sub, kv);
        expect(bits(out.slice(at, at + probeLen))).toEqual(bits(expected));
        expect(sub.plan.rows.includes(solo)).toBe(true);
      }
    });
  }
});

/** The step restricted to some rows of `full` (same q/k/v per token), with the probe row's token offset. */
function subStep(full: Step, rowIds: number[], probeStart: number): Step & { probeOffset: number } {
  const { plan, headDim } = full;
  const { numHeads, numKvHeads } = full.heads;
  const kvDim = numKvHeads * headDim;
  const starts: number[] = [];
  let t = 0;
  for (const row of plan.rows) {
    starts.push(t);
    t += row.tokenIds.length;
  }
  const rows = rowIds.map((r) => plan.rows[r]!);
  const sub = makeStep(full.kvCacheType, full.shape, { stepIndex: 0, rows }, headDim, 0, full.heads, full.scoring);
  let offset = 0;
  let probeOffset = -1;
  for (const r of rowIds) {
    const n = plan.rows[r]!.tokenIds.length;
    if (starts[r] === probeStart) probeOffset = offset;
    sub.q.set(full.q.subarray(starts[r]! * numHeads * headDim, (starts[r]! + n) * numHeads * headDim), offset * numHeads * headDim);
    sub.k.set(full.k.subarray(starts[r]! * kvDim, (starts[r]! + n) * kvDim), offset * kvDim);
    sub.v.set(full.v.subarray(starts[r]! * kvDim, (starts[r]! + n) * kvDim), offset * kvDim);
    offset += n;
  }
  return { ...sub, probeOffset };
}

/** gemma-like scoring that bites at these sizes: another scale, a cap near the scores reached, a window. */
function windowed(headDim: number, window: number): AttentionScoring {
  return { scale: 0.7 / Math.sqrt(headDim), softcap: 1.5, window };
}

/**
 * The plan with every block wholly before a row's window pointed at one poison block (as a freed
 * and reused block would be), and the history ([2, NUM_BLOCKS * BLOCK_SIZE, kvDim], K then V) with
 * NaN in that block and in every slot before a row's window: a kernel that read one gives NaN.
 */
function poisonBeforeWindows(plan: StepPlan, window: number, history: Float32Array, kvDim: number): { plan: StepPlan; history: Float32Array } {
  const used = new Set(plan.rows.flatMap((row) => Array.from(row.blockTables[0]!)));
  let poison = 1;
  while (used.has(poison)) poison++;
  const poisoned = Float32Array.from(history);
  const half = NUM_BLOCKS * BLOCK_SIZE * kvDim;
  const nanSlot = (slot: number): void => {
    poisoned.fill(NaN, slot * kvDim, (slot + 1) * kvDim);
    poisoned.fill(NaN, half + slot * kvDim, half + (slot + 1) * kvDim);
  };
  for (let j = 0; j < BLOCK_SIZE; j++) nanSlot(poison * BLOCK_SIZE + j);
  const rows = plan.rows.map((row) => {
    const first = windowStart(row.startPos, window); // the row's first query's window
    const blockTable = Int32Array.from(row.blockTables[0]!);
    for (let j = 0; j < first; j++) nanSlot(blockTable[Math.floor(j / BLOCK_SIZE)]! * BLOCK_SIZE + (j % BLOCK_SIZE));
    for (let b = 0; (b + 1) * BLOCK_SIZE <= first; b++) blockTable[b] = poison;
    return { ...row, blockTables: [blockTable] };
  });
  return { plan: { ...plan, rows }, history: poisoned };
}
