// StepMeta's attention work items: prefill rows cut into query items, decode rows (and each query
// of a verify row past 512 keys) as one item or, past one round of splits and while split-state
// space lasts, one partition per round and a merge; the sampled positions of verify rows.
import { describe, expect, it } from 'vitest';
import type { StepPlan } from '../engine/types';
import { ATTENTION_ITEM_WORDS, ITEM_KIND, SAMPLE_INFO_WORDS, StepMeta, maxSampledPositions } from './step-meta';

const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };

/** Rows as (startPos, numTokens), each on its own run of blocks. */
function plan(shapes: Array<[number, number]>): StepPlan {
  let next = 1;
  const rows = shapes.map(([startPos, n], r) => {
    const numBlocks = Math.ceil((startPos + n) / 16);
    const blockTable = Int32Array.from({ length: numBlocks }, () => next++);
    return { sessionId: `s${r}`, tokenIds: new Int32Array(n), startPos, blockTable, sampling, sample: true };
  });
  return { stepIndex: 0, rows };
}

/** One row, feeding n tokens from startPos, the last k of them drafts. */
function verifyPlan(startPos: number, n: number, k: number): StepPlan {
  const p = plan([[startPos, n]]);
  p.rows[0] = { ...p.rows[0]!, numDraftTokens: k };
  return p;
}

function items(words: Uint32Array, count: number): number[][] {
  return Array.from({ length: count }, (_, i) => Array.from(words.subarray(i * ATTENTION_ITEM_WORDS, (i + 1) * ATTENTION_ITEM_WORDS)));
}

const limits = (maxSplitStates: number) => ({ maxTokens: 256, maxRows: 8, blockSize: 16, numBlocks: 1024, maxPositions: 4096, vocabSize: 1, attentionQueriesPerItem: 32, maxSplitStates });

describe('StepMeta attention items', () => {
  const { prefill, decode, partition } = ITEM_KIND;
  // a 70-token chunk, a decode row at 512 keys (16 splits: one round), one at 1,201 keys (38 splits)
  const shapes: Array<[number, number]> = [[0, 70], [511, 1], [1200, 1]];

  it('splits a decode row past one round into partitions of 16 splits and one merge item', () => {
    const meta = new StepMeta(limits(100));
    meta.pack(plan(shapes));
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([
      [0, 0, 32, prefill, 0, 0, 0, 0],
      [0, 32, 32, prefill, 0, 0, 0, 0],
      [0, 64, 6, prefill, 0, 0, 0, 0],
      [1, 0, 1, decode, 0, 0, 0, 0],
      [2, 0, 1, partition, 0, 0, 0, 0],
      [2, 0, 1, partition, 16, 0, 0, 0],
      [2, 0, 1, partition, 32, 0, 0, 0],
    ]);
    expect(items(meta.mergeItems, meta.numMergeItems)).toEqual([[2, 0, 1, decode, 0, 0, 0, 0]]);
    expect(meta.numSplitStates).toBe(38);
  });

  it('gives every partitioned row its own states and walks a row that finds no room left', () => {
    const meta = new StepMeta(limits(80));
    meta.pack(plan([[1200, 1], [700, 1], [1300, 1]])); // 38, 22 and 41 splits: the third does not fit
    expect(items(meta.mergeItems, meta.numMergeItems)).toEqual([
      [0, 0, 1, decode, 0, 0, 0, 0],
      [1, 0, 1, decode, 0, 38, 0, 0],
    ]);
    expect(items(meta.attentionItems, meta.numAttentionItems).at(-1)).toEqual([2, 0, 1, decode, 0, 0, 0, 0]);
    expect(meta.numSplitStates).toBe(60);
  });

  it('walks every decode row in one workgroup when there is no split-state space', () => {
    const meta = new StepMeta(limits(0));
    meta.pack(plan(shapes));
    expect(meta.numMergeItems).toBe(0);
    expect(items(meta.attentionItems, meta.numAttentionItems).at(-1)).toEqual([2, 0, 1, decode, 0, 0, 0, 0]);
  });

  it('partitions each query of a verify row past one round, each with its own states, while they last', () => {
    const meta = new StepMeta({ ...limits(100), maxDraftTokens: 2 });
    meta.pack(verifyPlan(1200, 3, 2)); // queries at 1,201, 1,202 and 1,203 keys: 38 splits each, room for two
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([
      [0, 0, 1, partition, 0, 0, 0, 0],
      [0, 0, 1, partition, 16, 0, 0, 0],
      [0, 0, 1, partition, 32, 0, 0, 0],
      [0, 1, 1, partition, 0, 38, 0, 0],
      [0, 1, 1, partition, 16, 38, 0, 0],
      [0, 1, 1, partition, 32, 38, 0, 0],
      [0, 2, 1, decode, 0, 0, 0, 0],
    ]);
    expect(items(meta.mergeItems, meta.numMergeItems)).toEqual([
      [0, 0, 1, decode, 0, 0, 0, 0],
      [0, 1, 1, decode, 0, 38, 0, 0],
    ]);
  });

  it('has merge-item space for every verify query of a full step, past one per row', () => {
    const lim = { ...limits(8 * 128), maxTokens: 16, maxRows: 2, numBlocks: 8 * 256 + 1, maxDraftTokens: 3 };
    const meta = new StepMeta(lim);
    const p = plan([[2000, 4], [3000, 4]]);
    p.rows = p.rows.map((row) => ({ ...row, numDraftTokens: 3 }));
    meta.pack(p);
    expect(meta.numMergeItems).toBe(8);
    expect(meta.mergeItems.length).toBeGreaterThanOrEqual(8 * ATTENTION_ITEM_WORDS);
    expect(meta.attentionItems.length).toBeGreaterThanOrEqual(meta.numAttentionItems * ATTENTION_ITEM_WORDS);
  });

  it('partitions no more queries than it has merge items for: a verify row feeding more tokens than its drafts', () => {
    const meta = new StepMeta({ ...limits(1024), maxTokens: 64, maxRows: 1, maxDraftTokens: 1 });
    meta.pack(verifyPlan(600, 10, 1)); // 10 queries past 512 keys, 2 merge items
    expect(meta.numMergeItems).toBe(2);
    expect(items(meta.attentionItems, meta.numAttentionItems).filter((item) => item[3] === ITEM_KIND.decode).map((item) => item[1])).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('has item space for a step of partitioned rows', () => {
    const lim = { ...limits(8 * 128), maxTokens: 8, maxRows: 8, numBlocks: 8 * 256 + 1 };
    const meta = new StepMeta(lim);
    meta.pack(plan(Array.from({ length: 8 }, () => [4095, 1] as [number, number]))); // 128 splits each: 8 partitions
    expect(meta.numAttentionItems).toBe(64);
    expect(meta.attentionItems.length).toBeGreaterThanOrEqual(64 * ATTENTION_ITEM_WORDS);
  });
});

describe('StepMeta sampled positions', () => {
  it('samples a verify row after its last known token and after each draft, keyed by each position, rows in plan order', () => {
    const meta = new StepMeta({ ...limits(0), maxDraftTokens: 3 });
    const p = plan([[0, 5], [40, 4], [9, 1]]); // a prefill chunk, a decode row with 3 drafts, a plain decode row
    p.rows[1] = { ...p.rows[1]!, numDraftTokens: 3 };
    meta.pack(p);
    expect(meta.numSampled).toBe(6);
    expect(meta.numDrafts).toBe(3);
    expect(Array.from(meta.sampleRows.subarray(0, 6))).toEqual([0, 1, 1, 1, 1, 2]);
    expect(Array.from(meta.sampleTokens.subarray(0, 6))).toEqual([4, 5, 6, 7, 8, 9]); // the token each position follows
    const positions = Array.from({ length: 6 }, (_, i) => meta.sampleInfo[i * SAMPLE_INFO_WORDS + 4]);
    expect(positions).toEqual([5, 41, 42, 43, 44, 10]);
    // within one round of splits, the verify row attends as one prefill item
    const { prefill, decode } = ITEM_KIND;
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([
      [0, 0, 5, prefill, 0, 0, 0, 0],
      [1, 0, 4, prefill, 0, 0, 0, 0],
      [2, 0, 1, decode, 0, 0, 0, 0],
    ]);
    // past one round (512 keys), its queries attend as decode rows do, one item each
    meta.pack(verifyPlan(512, 3, 2));
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([
      [0, 0, 1, decode, 0, 0, 0, 0],
      [0, 1, 1, decode, 0, 0, 0, 0],
      [0, 2, 1, decode, 0, 0, 0, 0],
    ]);
    meta.pack(verifyPlan(511, 3, 2));
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([[0, 0, 3, prefill, 0, 0, 0, 0]]);
  });

  it('rejects drafts past maxDraftTokens, without a leading known token, or on a row that does not sample', () => {
    const meta = new StepMeta({ ...limits(0), maxDraftTokens: 2 });
    const withDrafts = (n: number, k: number, sample = true) => {
      const p = plan([[0, n]]);
      p.rows[0] = { ...p.rows[0]!, numDraftTokens: k, sample };
      return p;
    };
    expect(() => meta.pack(withDrafts(4, 3))).toThrow(RangeError);
    expect(() => meta.pack(withDrafts(2, 2))).toThrow(RangeError);
    expect(() => meta.pack(withDrafts(3, 1, false))).toThrow(RangeError);
    expect(() => meta.pack(withDrafts(3, 2))).not.toThrow();
    expect(() => new StepMeta(limits(0)).pack(withDrafts(3, 1))).toThrow(RangeError); // no maxDraftTokens: none allowed
  });

  it('holds a position per row and per draft, never more than the fed tokens', () => {
    expect(maxSampledPositions({ maxTokens: 512, maxRows: 16, maxDraftTokens: 8 })).toBe(144);
    expect(maxSampledPositions({ maxTokens: 64, maxRows: 16, maxDraftTokens: 8 })).toBe(64);
    expect(maxSampledPositions({ maxTokens: 64, maxRows: 16 })).toBe(16);
  });
});

describe('StepMeta window tables', () => {
  const windowGroup = { numBlocks: 20, window: 32 };

  it("packs each row's window table at its block table's offset, 0 before its first token's window", () => {
    const meta = new StepMeta({ ...limits(0), windowGroup });
    const p = plan([[0, 20], [70, 1]]); // blocks 0-1; blocks 0-4, of which 0 and 1 are before position 70's window (39..70)
    p.rows[0] = { ...p.rows[0]!, windowBlockTable: Int32Array.of(3, 4) };
    p.rows[1] = { ...p.rows[1]!, windowBlockTable: Int32Array.of(0, 0, 5, 6, 7) };
    meta.pack(p);
    expect(meta.numBlockTableEntries).toBe(7);
    expect(Array.from(meta.windowBlockTables!.subarray(0, 7))).toEqual([3, 4, 0, 0, 5, 6, 7]);
    expect(meta.rowInfo[4 + 3]).toBe(2); // row 1's offset, the same in both tables
    expect(new StepMeta(limits(0)).windowBlockTables).toBeNull();
  });

  it('refuses a row without a window table, or with one that is short or holds a block outside the window pool where it is read', () => {
    const meta = new StepMeta({ ...limits(0), windowGroup });
    const withWindow = (table?: number[]) => {
      const p = plan([[70, 1]]);
      if (table) p.rows[0] = { ...p.rows[0]!, windowBlockTable: Int32Array.from(table) };
      return p;
    };
    expect(() => meta.pack(withWindow())).toThrow(/no windowBlockTable/);
    expect(() => meta.pack(withWindow([0, 0, 5, 6]))).toThrow(/window table holds 4 blocks/);
    expect(() => meta.pack(withWindow([0, 0, 0, 6, 7]))).toThrow(/window KV block 0/);
    expect(() => meta.pack(withWindow([0, 0, 5, 6, 20]))).toThrow(/window KV block 20/);
    expect(() => meta.pack(withWindow([0, 0, 5, 6, 7]))).not.toThrow();
  });
});
