// Packs a StepPlan into the per-step metadata the kernels read (TokenInfo, RowInfo, attention work
// items, block tables, SampleInfo, last-token indices), in CPU arrays allocated once. Not a GPU upload.
import type { StepPlan } from '../engine/types';

/** u32 words of one TokenInfo { id, pos, row, blockTableOffset } (embedding, rope_kv_write). */
export const TOKEN_INFO_WORDS = 4;
/** u32 words of one RowInfo { firstToken, numTokens, startPos, blockTableOffset } (paged_attention). */
export const ROW_INFO_WORDS = 4;
/**
 * u32 words of one attention WorkItem { row, firstQuery, numQueries, decode } (paged_attention):
 * a row feeding one token is one decode item; a longer row is cut into items of
 * attentionQueriesPerItem queries. Both depend on the row alone, never on the rest of the step.
 */
export const ATTENTION_ITEM_WORDS = 4;
/** u32 words of one SampleInfo { temperature, topK, topP, seed, pos, pad x3 } (sample.wgsl). */
export const SAMPLE_INFO_WORDS = 8;

export interface StepMetaLimits {
  maxTokens: number;
  maxRows: number;
  blockSize: number;
  /** Blocks in the KV pool; ids 1..numBlocks-1 are usable (0 is reserved). */
  numBlocks: number;
  /** Positions a row may reach (exclusive): bounds block tables and the RoPE tables. */
  maxPositions: number;
  vocabSize: number;
  /** Queries of one prefill attention work item (kernels.ts attentionGeometry). */
  attentionQueriesPerItem: number;
}

export class StepMeta {
  /** [maxTokens, TOKEN_INFO_WORDS] */
  readonly tokens: Uint32Array;
  /** [maxRows, ROW_INFO_WORDS] */
  readonly rowInfo: Uint32Array;
  /** [maxTokens, ATTENTION_ITEM_WORDS]: at most one item per token */
  readonly attentionItems: Uint32Array;
  /** [maxRows * blocks per row]: every row's block table up to its last position, concatenated */
  readonly blockTables: Uint32Array;
  /** [maxRows, SAMPLE_INFO_WORDS], viewed as u32 and f32 */
  readonly sampleInfo: Uint32Array;
  private readonly sampleInfoF32: Float32Array;
  /** [maxRows] index into the step's tokens of each sampling row's last token */
  readonly sampleTokens: Uint32Array;
  /** [maxRows] index into plan.rows of each sampling row */
  readonly sampleRows: Int32Array;
  numTokens = 0;
  numRows = 0;
  numBlockTableEntries = 0;
  numSampled = 0;
  numAttentionItems = 0;

  constructor(readonly limits: StepMetaLimits) {
    const maxBlocksPerRow = Math.ceil(limits.maxPositions / limits.blockSize);
    this.tokens = new Uint32Array(limits.maxTokens * TOKEN_INFO_WORDS);
    this.rowInfo = new Uint32Array(limits.maxRows * ROW_INFO_WORDS);
    this.attentionItems = new Uint32Array(limits.maxTokens * ATTENTION_ITEM_WORDS);
    this.blockTables = new Uint32Array(limits.maxRows * maxBlocksPerRow);
    this.sampleInfo = new Uint32Array(limits.maxRows * SAMPLE_INFO_WORDS);
    this.sampleInfoF32 = new Float32Array(this.sampleInfo.buffer);
    this.sampleTokens = new Uint32Array(limits.maxRows);
    this.sampleRows = new Int32Array(limits.maxRows);
  }

  /** Fills the arrays from plan; throws RangeError (before any GPU work) on a plan that does not fit. */
  pack(plan: StepPlan): void {
    const { maxTokens, maxRows, blockSize, numBlocks, maxPositions, vocabSize, attentionQueriesPerItem } = this.limits;
    if (plan.rows.length > maxRows) throw new RangeError(`${plan.rows.length} rows exceed maxRows ${maxRows}`);
    let t = 0;
    let entries = 0;
    let sampled = 0;
    let items = 0;
    plan.rows.forEach((row, r) => {
      const n = row.tokenIds.length;
      if (n === 0) throw new RangeError(`row ${row.sessionId} feeds no tokens`);
      if (t + n > maxTokens) throw new RangeError(`step carries more than maxTokensPerStep ${maxTokens} tokens`);
      const lastPos = row.startPos + n - 1;
      if (row.startPos < 0 || lastPos >= maxPositions) {
        throw new RangeError(`row ${row.sessionId}: positions ${row.startPos}..${lastPos} outside 0..${maxPositions - 1}`);
      }
      const numRowBlocks = Math.floor(lastPos / blockSize) + 1;
      if (row.blockTable.length < numRowBlocks) {
        throw new RangeError(`row ${row.sessionId}: block table holds ${row.blockTable.length} blocks, position ${lastPos} needs ${numRowBlocks}`);
      }
      for (let b = 0; b < numRowBlocks; b++) {
        const id = row.blockTable[b];
        if (!(id >= 1 && id < numBlocks)) throw new RangeError(`row ${row.sessionId}: KV block ${id} outside 1..${numBlocks - 1}`);
        this.blockTables[entries + b] = id;
      }
      const ri = r * ROW_INFO_WORDS;
      this.rowInfo[ri] = t;
      this.rowInfo[ri + 1] = n;
      this.rowInfo[ri + 2] = row.startPos;
      this.rowInfo[ri + 3] = entries;
      for (let first = 0; first < n; first += attentionQueriesPerItem, items++) {
        const o = items * ATTENTION_ITEM_WORDS;
        this.attentionItems[o] = r;
        this.attentionItems[o + 1] = first;
        this.attentionItems[o + 2] = Math.min(attentionQueriesPerItem, n - first);
        this.attentionItems[o + 3] = n === 1 ? 1 : 0;
      }
      for (let j = 0; j < n; j++, t++) {
        const id = row.tokenIds[j];
        if (!(id >= 0 && id < vocabSize)) throw new RangeError(`row ${row.sessionId}: token id ${id} outside vocab ${vocabSize}`);
        const o = t * TOKEN_INFO_WORDS;
        this.tokens[o] = id;
        this.tokens[o + 1] = row.startPos + j;
        this.tokens[o + 2] = r;
        this.tokens[o + 3] = entries;
      }
      entries += numRowBlocks;
      if (row.sample) {
        const o = sampled * SAMPLE_INFO_WORDS;
        this.sampleInfoF32[o] = row.sampling.temperature;
        this.sampleInfo[o + 1] = Math.max(0, Math.floor(row.sampling.topK));
        this.sampleInfoF32[o + 2] = row.sampling.topP;
        this.sampleInfo[o + 3] = row.sampling.seed >>> 0;
        this.sampleInfo[o + 4] = lastPos + 1; // the position of the token being generated
        this.sampleTokens[sampled] = t - 1;
        this.sampleRows[sampled] = r;
        sampled++;
      }
    });
    this.numTokens = t;
    this.numRows = plan.rows.length;
    this.numBlockTableEntries = entries;
    this.numSampled = sampled;
    this.numAttentionItems = items;
  }
}
