// StepMeta's attention work items: every query, of any row, an item per split of its keys (from its
// position alone) and a merge item; the sampled positions of verify rows; a sliding-window group's tables.
import { describe, expect, it } from 'vitest';
import type { StepPlan } from '../engine/types';
import { ATTENTION_ITEM_WORDS, SAMPLE_INFO_WORDS, StepMeta, maxSampledPositions } from './step-meta';

const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };

/** Rows as (startPos, numTokens), each on its own run of blocks. */
function plan(shapes: Array<[number, number]>): StepPlan {
  let next = 1;
  const rows = shapes.map(([startPos, n], r) => {
    const numBlocks = Math.ceil((startPos + n) / 16);
    const blockTable = Int32Array.from({ length: numBlocks }, () => next++);
    return { sessionId: `s${r}`, tokenIds: new Int32Array(n), startPos, blockTables: [blockTable], sampling, sample: true };
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

const limits = (maxSplits = 16) => ({ maxTokens: 256, maxRows: 8, blockSize: 16, kvGroups: [{ numBlocks: 1024, window: null }], maxPositions: 4096, vocabSize: 1, attentionSplits: { splitKeys: 256, maxSplits } });

describe('StepMeta attention items', () => {
  it('gives every query an item per split of 256 keys at absolute boundaries and one merge item, whatever its row', () => {
    const meta = new StepMeta(limits());
    meta.pack(plan([[0, 2], [511, 1], [1200, 1], [255, 2]])); // a chunk; decode at 512 and 1,201 keys; a chunk crossing 256
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([
      [0, 0, 0, 1],
      [0, 1, 0, 1],
      [1, 0, 0, 1],
      [1, 0, 1, 1],
      ...[0, 1, 2, 3, 4].map((split) => [2, 0, split, 1]),
      [3, 0, 0, 1],
      [3, 1, 0, 1],
      [3, 1, 1, 1],
    ]);
    expect(items(meta.mergeItems, meta.numMergeItems)).toEqual([[0, 0, 0, 1], [0, 1, 0, 1], [1, 0, 0, 1], [2, 0, 0, 1], [3, 0, 0, 1], [3, 1, 0, 1]]);
  });

  it("groups a row's consecutive queries by queriesPerItem, an item per split any of them reaches", () => {
    const meta = new StepMeta({ ...limits(), attentionQueriesPerItem: 2 });
    meta.pack(plan([[253, 5], [600, 1]])); // queries at 254..258 keys (the last two cross 256), then a decode row
    expect(items(meta.attentionItems, meta.numAttentionItems)).toEqual([
      [0, 0, 0, 2],
      [0, 2, 0, 2],
      [0, 2, 1, 2],
      [0, 4, 0, 1],
      [0, 4, 1, 1],
      ...[0, 1, 2].map((split) => [1, 0, split, 1]),
    ]);
    expect(meta.numMergeItems).toBe(6);
  });

  it('widens the splits of a query past maxSplits narrow ones to whole multiples', () => {
    const meta = new StepMeta(limits(4));
    meta.pack(plan([[4095, 1], [1200, 1], [1023, 1]])); // 16 narrow splits: 4 of 1,024; 5: 3 of 512; 4: 4 of 256
    expect(items(meta.attentionItems, meta.numAttentionItems).map((item) => item[0])).toEqual([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2]);
  });

  it("gives a verify row's queries the items of decode rows at their positions", () => {
    const meta = new StepMeta({ ...limits(), maxDraftTokens: 2 });
    meta.pack(verifyPlan(1022, 3, 2)); // queries at 1,023, 1,024 and 1,025 keys
    const verify = items(meta.attentionItems, meta.numAttentionItems);
    const decodes = [1022, 1023, 1024].flatMap((startPos, q) => {
      meta.pack(plan([[startPos, 1]]));
      return items(meta.attentionItems, meta.numAttentionItems).map(([, , split]) => [0, q, split!, 1]);
    });
    expect(verify).toEqual(decodes);
    expect(verify).toHaveLength(4 + 4 + 5);
  });

  it('has item space for a full step at the most splits', () => {
    const meta = new StepMeta({ ...limits(), maxTokens: 8, maxRows: 8, kvGroups: [{ numBlocks: 8 * 256 + 1, window: null }] });
    meta.pack(plan(Array.from({ length: 8 }, () => [4095, 1] as [number, number])));
    expect(meta.numAttentionItems).toBe(8 * 16);
    expect(meta.attentionItems.length).toBe(8 * 16 * ATTENTION_ITEM_WORDS);
    expect(meta.mergeItems.length).toBe(8 * ATTENTION_ITEM_WORDS);
  });
});

describe('StepMeta sampled positions', () => {
  it('samples a verify row after its last known token and after each draft, keyed by each position, rows in plan order', () => {
    const meta = new StepMeta({ ...limits(), maxDraftTokens: 3 });
    const p = plan([[0, 5], [40, 4], [9, 1]]); // a prefill chunk, a decode row with 3 drafts, a plain decode row
    p.rows[1] = { ...p.rows[1]!, numDraftTokens: 3 };
    meta.pack(p);
    expect(meta.numSampled).toBe(6);
    expect(meta.numDrafts).toBe(3);
    expect(Array.from(meta.sampleRows.subarray(0, 6))).toEqual([0, 1, 1, 1, 1, 2]);
    expect(Array.from(meta.sampleTokens.subarray(0, 6))).toEqual([4, 5, 6, 7, 8, 9]); // the token each position follows
    const positions = Array.from({ length: 6 }, (_, i) => meta.sampleInfo[i * SAMPLE_INFO_WORDS + 4]);
    expect(positions).toEqual([5, 41, 42, 43, 44, 10]);
  });

  it('rejects drafts past maxDraftTokens, without a leading known token, or on a row that does not sample', () => {
    const meta = new StepMeta({ ...limits(), maxDraftTokens: 2 });
    const withDrafts = (n: number, k: number, sample = true) => {
      const p = plan([[0, n]]);
      p.rows[0] = { ...p.rows[0]!, numDraftTokens: k, sample };
      return p;
    };
    expect(() => meta.pack(withDrafts(4, 3))).toThrow(RangeError);
    expect(() => meta.pack(withDrafts(2, 2))).toThrow(RangeError);
    expect(() => meta.pack(withDrafts(3, 1, false))).toThrow(RangeError);
    expect(() => meta.pack(withDrafts(3, 2))).not.toThrow();
    expect(() => new StepMeta(limits()).pack(withDrafts(3, 1))).toThrow(RangeError); // no maxDraftTokens: none allowed
  });

  it('holds a position per row and per draft, never more than the fed tokens', () => {
    expect(maxSampledPositions({ maxTokens: 512, maxRows: 16, maxDraftTokens: 8 })).toBe(144);
    expect(maxSampledPositions({ maxTokens: 64, maxRows: 16, maxDraftTokens: 8 })).toBe(64);
    expect(maxSampledPositions({ maxTokens: 64, maxRows: 16 })).toBe(16);
  });
});

describe('StepMeta with a sliding-window group', () => {
  const kvGroups = [{ numBlocks: 1024, window: null }, { numBlocks: 20, window: 32 }];

  it("packs each row's sliding-group table at its first table's offset, 0 before its first token's window", () => {
    const meta = new StepMeta({ ...limits(), kvGroups });
    const p = plan([[0, 20], [70, 1]]); // blocks 0-1; blocks 0-4, of which 0 and 1 are before position 70's window (39..70)
    p.rows[0] = { ...p.rows[0]!, blockTables: [p.rows[0]!.blockTables[0]!, Int32Array.of(3, 4)] };
    p.rows[1] = { ...p.rows[1]!, blockTables: [p.rows[1]!.blockTables[0]!, Int32Array.of(0, 0, 5, 6, 7)] };
    meta.pack(p);
    expect(meta.numBlockTableEntries).toBe(7);
    expect(Array.from(meta.blockTables[1]!.subarray(0, 7))).toEqual([3, 4, 0, 0, 5, 6, 7]);
    expect(meta.rowInfo[4 + 3]).toBe(2); // row 1's offset, the same in both tables
    expect(new StepMeta(limits()).blockTables).toHaveLength(1);
  });

  it('refuses a row without a sliding-group table, or with one that is short or holds a block outside its pool where it is read', () => {
    const meta = new StepMeta({ ...limits(), kvGroups });
    const withWindow = (table?: number[]) => {
      const p = plan([[70, 1]]);
      if (table) p.rows[0] = { ...p.rows[0]!, blockTables: [p.rows[0]!.blockTables[0]!, Int32Array.from(table)] };
      return p;
    };
    expect(() => meta.pack(withWindow())).toThrow(/1 block tables, but the runner keeps 2 KV cache groups/);
    expect(() => meta.pack(withWindow([0, 0, 5, 6]))).toThrow(/block table of KV cache group 1 holds 4 blocks/);
    expect(() => meta.pack(withWindow([0, 0, 0, 6, 7]))).toThrow(/KV block 0 of KV cache group 1/);
    expect(() => meta.pack(withWindow([0, 0, 5, 6, 20]))).toThrow(/KV block 20 of KV cache group 1/);
    expect(() => meta.pack(withWindow([0, 0, 5, 6, 7]))).not.toThrow();
  });
});
