// Packs a StepPlan into the per-step metadata the kernels read (TokenInfo, RowInfo, attention work
// items, block tables, SampleInfo, sampled-token indices), in CPU arrays allocated once. Not a GPU upload.
import { firstReadBlock, type KvCacheGroupSpec, type StepPlan, type StepRow } from '../engine/types';
import { maskWords } from '../engine/constraints';
import { hasPenalties, inverseRepetitionPenalty, maxPenaltyEntriesPerRow, penaltyEntries } from '../engine/penalties';
import { inverseTemperature } from '../engine/sample-numerics';
import { numSampledPositions, sampledPosition, sampledTokenIndex } from '../engine/sampled-positions';
import { sampleIsGathered } from './sample-plan';
import { attentionNumSplits, type AttentionShape } from './kernels';

/** u32 words of one TokenInfo { id, pos, row, blockTableOffset } (embedding, rope_kv_write). */
export const TOKEN_INFO_WORDS = 4;
/** u32 words of one RowInfo { firstToken, numTokens, startPos, blockTableOffset } (paged_attention). */
export const ROW_INFO_WORDS = 4;
/**
 * u32 words of one attention WorkItem { row, query, split, numQueries } (paged_attention): every
 * row's queries, decode, verify or prefill alike, in groups of attentionQueriesPerItem consecutive
 * ones, each group one item per split of its queries' keys (kernels.ts attentionNumSplits, from a
 * query's position alone), and every query one merge item. A query's lane computes the same
 * instructions on its own values whatever group it is in, so nothing about the rest of the step
 * enters its bits.
 */
export const ATTENTION_ITEM_WORDS = 4;
/** u32 words of one SampleInfo { temperature, topK, topP, seed, pos, invTemperature, pad x2 } (sample.wgsl). */
export const SAMPLE_INFO_WORDS = 8;
/** f32 words of one logprob slot (sample.wgsl's LOGPROB_WORDS): the token's, then (id bits, logprob) per top id, 20 at most. */
export const SAMPLE_LOGPROB_WORDS = 41;
/** u32 words of one PenaltyInfo (penalties.wgsl): one per sampled position of a penalized row. */
export const PENALTY_INFO_WORDS = 12;
/** u32 words of one penalty Entry { id, count, inPrompt, bias } (penalties.wgsl). */
export const PENALTY_ENTRY_WORDS = 4;

export interface StepMetaLimits {
  maxTokens: number;
  maxRows: number;
  blockSize: number;
  /**
   * The runner's KV cache groups (ModelRunner.kvGroups): every row carries a block table per group,
   * packed into blockTables[group]; in each, ids 1..numBlocks-1 are usable (0 is reserved).
   */
  kvGroups: readonly KvCacheGroupSpec[];
  /** Positions a row may reach (exclusive): bounds block tables and the RoPE tables. */
  maxPositions: number;
  vocabSize: number;
  /** How attention splits a query's keys (kernels.ts attentionShape): its work items per query. */
  attentionSplits: Pick<AttentionShape, 'splitKeys' | 'maxSplits'>;
  /** Queries of one attention item (kernels.ts attentionLanes' queriesPerItem; default 1). */
  attentionQueriesPerItem?: number;
  /** Drafted tokens one row may carry (StepRow.numDraftTokens; default 0: none). */
  maxDraftTokens?: number;
}

/**
 * Sampled positions one step may hold: a row samples after its last known token and after each
 * draft, and every sampled position is a fed token. Sizes SampleInfo, the logits and the readback.
 */
export function maxSampledPositions(limits: Pick<StepMetaLimits, 'maxTokens' | 'maxRows' | 'maxDraftTokens'>): number {
  return Math.min(limits.maxTokens, limits.maxRows * (1 + (limits.maxDraftTokens ?? 0)));
}

/** Writes WorkItem `index` of `into` field by field (pack runs every step: no array per item). */
function writeItem(into: Uint32Array, index: number, row: number, query: number, split: number, numQueries: number): void {
  const o = index * ATTENTION_ITEM_WORDS;
  into[o] = row;
  into[o + 1] = query;
  into[o + 2] = split;
  into[o + 3] = numQueries;
}

export class StepMeta {
  /** [maxTokens, TOKEN_INFO_WORDS] */
  readonly tokens: Uint32Array;
  /** [maxRows, ROW_INFO_WORDS] */
  readonly rowInfo: Uint32Array;
  /** [maxItems, ATTENTION_ITEM_WORDS]: one item per split of each token's keys */
  readonly attentionItems: Uint32Array;
  /** [maxMergeItems, ATTENTION_ITEM_WORDS]: one merge item per token (split 0) */
  readonly mergeItems: Uint32Array;
  /**
   * [kvGroups] of [maxRows * blocks per row]: every row's block table of that group up to its last
   * position, concatenated, each row at the same offset in every group (its tables have the same
   * length), so RowInfo's and TokenInfo's blockTableOffset serve all and a layer only binds its
   * group's. Entries before the first block the row's first token reads in a group's kind are 0:
   * no kernel reads them.
   */
  readonly blockTables: Uint32Array[];
  /**
   * [maxSampled, SAMPLE_INFO_WORDS], viewed as u32 and f32: one entry per sampled position, rows in
   * plan order, a row with k drafts taking k + 1 in a run (after its last known token, then after
   * each draft)
   */
  readonly sampleInfo: Uint32Array;
  private readonly sampleInfoF32: Float32Array;
  /** [maxSampled] index into the step's tokens of the token each sampled position follows */
  readonly sampleTokens: Uint32Array;
  /** [maxSampled] index into plan.rows of the row each sampled position belongs to */
  readonly sampleRows: Int32Array;
  /** [maxSampled] each sampled position's logprob slot (slots in sampled order), -1 when its row asks for none */
  readonly logprobSlots: Int32Array;
  /** [maxSampled, PENALTY_INFO_WORDS] viewed as u32 and f32: the penalized positions, in sampled order */
  readonly penaltyInfo: Uint32Array;
  private readonly penaltyInfoF32: Float32Array;
  /** Entries all penalized rows of a step may hold: every row at maxPenaltyEntriesPerRow. */
  readonly maxPenaltyEntries: number;
  /** [maxPenaltyEntries, PENALTY_ENTRY_WORDS] u32 and f32, made at the first step with penalties (most steps never need it) */
  private entries: { u32: Uint32Array; f32: Float32Array } | null = null;
  /** Positions sampled with penalties or bias (penaltyInfo entries) and the entries they share (per row). */
  numPenalized = 0;
  numPenaltyEntries = 0;
  /** [maxSampled] the logits row (sampled index) of each constrained position, in sampled order */
  readonly maskPositions: Uint32Array;
  /** [maxSampled, maskWords(vocab)] their bitmasks, made at the first constrained step (most steps never need it) */
  private maskRows: Uint32Array<ArrayBuffer> | null = null;
  /** Sampled positions of constrained rows (token_mask.wgsl's grid y). */
  numMasked = 0;
  /** Rows whose masks the last pack() left to packMasks() (filled while the forward runs): plan row and first mask slot. */
  private laterMasks: { row: number; slot: number }[] = [];
  /** Sampled positions whose rows ask for logprobs: the slots read back. */
  numLogprobSlots = 0;
  numTokens = 0;
  numRows = 0;
  numBlockTableEntries = 0;
  /** Sampled positions, drafts' included. */
  numSampled = 0;
  /** Sampled positions whose sampler gathers its kept ids (sample-plan.ts sampleIsGathered): with none, a step skips the sampler's radix levels. */
  numGathered = 0;
  /** Drafted tokens the step's rows carry (each one sampled position past its row's first). */
  numDrafts = 0;
  numAttentionItems = 0;
  numMergeItems = 0;

  constructor(readonly limits: StepMetaLimits) {
    const maxBlocksPerRow = Math.ceil(limits.maxPositions / limits.blockSize);
    this.tokens = new Uint32Array(limits.maxTokens * TOKEN_INFO_WORDS);
    this.rowInfo = new Uint32Array(limits.maxRows * ROW_INFO_WORDS);
    this.attentionItems = new Uint32Array(StepMeta.maxItems(limits) * ATTENTION_ITEM_WORDS);
    this.mergeItems = new Uint32Array(StepMeta.maxMergeItems(limits) * ATTENTION_ITEM_WORDS);
    if (limits.kvGroups.length === 0) throw new RangeError('a runner needs at least one KV cache group');
    this.blockTables = limits.kvGroups.map(() => new Uint32Array(limits.maxRows * maxBlocksPerRow));
    const maxSampled = maxSampledPositions(limits);
    this.sampleInfo = new Uint32Array(maxSampled * SAMPLE_INFO_WORDS);
    this.sampleInfoF32 = new Float32Array(this.sampleInfo.buffer);
    this.sampleTokens = new Uint32Array(maxSampled);
    this.sampleRows = new Int32Array(maxSampled);
    this.logprobSlots = new Int32Array(maxSampled);
    this.penaltyInfo = new Uint32Array(maxSampled * PENALTY_INFO_WORDS);
    this.penaltyInfoF32 = new Float32Array(this.penaltyInfo.buffer);
    this.maxPenaltyEntries = limits.maxRows * maxPenaltyEntriesPerRow(limits.vocabSize, limits.maxPositions);
    this.maskPositions = new Uint32Array(maxSampled);
  }

  /** [numMasked, maskWords(vocab)] of the last pack (empty before any step was constrained). */
  get masks(): Uint32Array<ArrayBuffer> {
    return this.maskRows?.subarray(0, this.numMasked * maskWords(this.limits.vocabSize)) ?? new Uint32Array(0);
  }

  /** [numPenaltyEntries, PENALTY_ENTRY_WORDS] of the last pack (empty before any step had penalties). */
  get penaltyEntries(): Uint32Array {
    return this.entries?.u32 ?? new Uint32Array(0);
  }

  /** Most attention work items a step can hold: every token at its most splits. */
  static maxItems(limits: StepMetaLimits): number {
    return limits.maxTokens * limits.attentionSplits.maxSplits;
  }

  /** Most merge items a step can hold: one per token. */
  static maxMergeItems(limits: StepMetaLimits): number {
    return limits.maxTokens;
  }

  /**
   * Fills the arrays from plan; throws RangeError (before any GPU work) on a plan that does not fit.
   * `laterMaskRows`: sampling rows whose tokenBitmask comes after the forward (StepMaskFill): their
   * mask slots are counted and placed now, their bits copied by packMasks().
   */
  pack(plan: StepPlan, laterMaskRows: readonly number[] = []): void {
    const { maxTokens, maxRows, blockSize, maxPositions, vocabSize, attentionSplits } = this.limits;
    const queriesPerItem = this.limits.attentionQueriesPerItem ?? 1;
    const maxDraftTokens = this.limits.maxDraftTokens ?? 0;
    if (plan.rows.length > maxRows) throw new RangeError(`${plan.rows.length} rows exceed maxRows ${maxRows}`);
    let t = 0;
    let entries = 0;
    let sampled = 0;
    let gathered = 0;
    let drafts = 0;
    let items = 0;
    let merges = 0;
    let penalized = 0;
    let numEntries = 0;
    let logprobSlots = 0;
    let masked = 0;
    const words = maskWords(vocabSize);
    this.laterMasks = [];
    plan.rows.forEach((row, r) => {
      const n = row.tokenIds.length;
      if (n === 0) throw new RangeError(`row ${row.sessionId} feeds no tokens`);
      if (t + n > maxTokens) throw new RangeError(`step carries more than maxTokensPerStep ${maxTokens} tokens`);
      const k = row.numDraftTokens ?? 0;
      if (!(Number.isInteger(k) && k >= 0 && k <= maxDraftTokens && (k === 0 || (row.sample && k < n)))) {
        throw new RangeError(`row ${row.sessionId} carries ${k} drafts (maxDraftTokens ${maxDraftTokens}, ${n} tokens, sample ${row.sample})`);
      }
      const lastPos = row.startPos + n - 1;
      if (row.startPos < 0 || lastPos >= maxPositions) {
        throw new RangeError(`row ${row.sessionId}: positions ${row.startPos}..${lastPos} outside 0..${maxPositions - 1}`);
      }
      const numRowBlocks = Math.floor(lastPos / blockSize) + 1;
      if (row.blockTables.length !== this.blockTables.length) {
        throw new RangeError(`row ${row.sessionId}: ${row.blockTables.length} block tables, but the runner keeps ${this.blockTables.length} KV cache groups`);
      }
      for (let g = 0; g < this.blockTables.length; g++) this.packTable(row, g, entries, numRowBlocks);
      const ri = r * ROW_INFO_WORDS;
      this.rowInfo[ri] = t;
      this.rowInfo[ri + 1] = n;
      this.rowInfo[ri + 2] = row.startPos;
      this.rowInfo[ri + 3] = entries;
      // every query alike: groups of queriesPerItem, an item per split of the group's keys (a query
      // sees none of a split past its own), then a merge item a query
      for (let q = 0; q < n; q += queriesPerItem) {
        const numQueries = Math.min(queriesPerItem, n - q);
        let numSplits = 0;
        for (let i = 0; i < numQueries; i++) numSplits = Math.max(numSplits, attentionNumSplits(row.startPos + q + i + 1, attentionSplits));
        for (let split = 0; split < numSplits; split++) writeItem(this.attentionItems, items++, r, q, split, numQueries);
      }
      for (let q = 0; q < n; q++) writeItem(this.mergeItems, merges++, r, q, 0, 1);
      for (let j = 0; j < n; j++, t++) {
        const id = row.tokenIds[j];
        if (!(id >= 0 && id < vocabSize)) throw new RangeError(`row ${row.sessionId}: token id ${id} outside vocab ${vocabSize}`);
        const o = t * TOKEN_INFO_WORDS;
        this.tokens[o] = id;
        this.tokens[o + 1] = row.startPos + j;
        this.tokens[o + 2] = r;
        this.tokens[o + 3] = entries;
      }
      const rowStart = t - n;
      entries += numRowBlocks;
      // after the last known token, then after each draft (sampled-positions.ts): the draft at position p is verified by
      // the draw keyed by p + 1, plain decode's there, from logits bitwise plain decode's (no kernel's
      // result for a token depends on how its row was cut into steps)
      // bias and penalties: the row's entries once, a PenaltyInfo per sampled position, each
      // counting the drafts before it (penalties.wgsl)
      const penalties = row.sample && hasPenalties(row.sampling);
      let firstEntry = numEntries;
      let rowEntries = 0;
      if (penalties) {
        const e = penaltyEntries(row.sampling, row.penaltyTokens, row.numPromptTokens ?? 0, vocabSize);
        if (numEntries + e.ids.length > this.maxPenaltyEntries) throw new RangeError(`step's penalty entries exceed ${this.maxPenaltyEntries}`);
        this.entries ??= (() => {
          const u32 = new Uint32Array(this.maxPenaltyEntries * PENALTY_ENTRY_WORDS);
          return { u32, f32: new Float32Array(u32.buffer) };
        })();
        for (let i = 0; i < e.ids.length; i++) {
          const o = (numEntries + i) * PENALTY_ENTRY_WORDS;
          this.entries.u32[o] = e.ids[i]!;
          this.entries.u32[o + 1] = e.counts[i]!;
          this.entries.u32[o + 2] = e.inPrompt[i]!;
          this.entries.f32[o + 3] = e.bias[i]!;
        }
        firstEntry = numEntries;
        rowEntries = e.ids.length;
        numEntries += rowEntries;
      }
      const later = row.sample && laterMaskRows.includes(r);
      if (later) this.laterMasks.push({ row: r, slot: masked });
      const mask = row.sample && !later ? row.tokenBitmask : undefined;
      if (mask && mask.length !== (k + 1) * words) throw new RangeError(`row ${row.sessionId}: tokenBitmask of ${mask.length} words, ${k + 1} positions of ${words} expected`);
      const topLogprobs = row.sampling.logprobs;
      for (let i = 0; i < numSampledPositions(row); i++, sampled++) {
        if (mask || later) {
          // the constraint's mask of this position (after i drafts), applied before penalties
          this.maskRows ??= new Uint32Array(maxSampledPositions(this.limits) * words);
          if (mask) this.maskRows.set(new Uint32Array(mask.buffer, mask.byteOffset + i * words * 4, words), masked * words);
          this.maskPositions[masked++] = sampled;
        }
        if (penalties) {
          const o = penalized * PENALTY_INFO_WORDS;
          const repetition = Math.fround(row.sampling.repetitionPenalty ?? 1);
          this.penaltyInfo[o] = sampled;
          this.penaltyInfo[o + 1] = firstEntry;
          this.penaltyInfo[o + 2] = rowEntries;
          this.penaltyInfo[o + 3] = t - k; // the row's first draft
          this.penaltyInfo[o + 4] = i; // drafts before this position
          this.penaltyInfoF32[o + 5] = row.sampling.frequencyPenalty ?? 0;
          this.penaltyInfoF32[o + 6] = row.sampling.presencePenalty ?? 0;
          this.penaltyInfoF32[o + 7] = repetition;
          this.penaltyInfoF32[o + 8] = inverseRepetitionPenalty(repetition); // the GPU never divides
          penalized++;
        }
        this.logprobSlots[sampled] = topLogprobs === undefined ? -1 : logprobSlots++;
        const o = sampled * SAMPLE_INFO_WORDS;
        this.sampleInfoF32[o] = row.sampling.temperature;
        this.sampleInfo[o + 1] = Math.max(0, Math.floor(row.sampling.topK));
        this.sampleInfoF32[o + 2] = row.sampling.topP;
        this.sampleInfo[o + 3] = row.sampling.seed >>> 0;
        this.sampleInfo[o + 4] = sampledPosition(row, i); // the position of the token being generated
        this.sampleInfoF32[o + 5] = inverseTemperature(row.sampling.temperature); // the GPU never divides
        this.sampleInfo[o + 6] = topLogprobs === undefined ? 0 : 1 + topLogprobs;
        this.sampleInfo[o + 7] = Math.max(0, this.logprobSlots[sampled]!);
        if (sampleIsGathered(row.sampling, vocabSize)) gathered++;
        this.sampleTokens[sampled] = rowStart + sampledTokenIndex(row, i);
        this.sampleRows[sampled] = r;
      }
      drafts += k;
    });
    this.numTokens = t;
    this.numRows = plan.rows.length;
    this.numBlockTableEntries = entries;
    this.numSampled = sampled;
    this.numGathered = gathered;
    this.numDrafts = drafts;
    this.numAttentionItems = items;
    this.numMergeItems = merges;
    this.numPenalized = penalized;
    this.numPenaltyEntries = numEntries;
    this.numLogprobSlots = logprobSlots;
    this.numMasked = masked;
  }

  /** Copies the masks pack() left to later (its laterMaskRows) from their rows' tokenBitmask, now filled. */
  packMasks(plan: StepPlan): void {
    const words = maskWords(this.limits.vocabSize);
    for (const { row: r, slot } of this.laterMasks) {
      const row = plan.rows[r]!;
      const mask = row.tokenBitmask;
      const expected = numSampledPositions(row) * words;
      if (!mask || mask.length !== expected) throw new RangeError(`row ${row.sessionId}: tokenBitmask of ${mask?.length ?? 0} words after the fill, ${expected} expected`);
      this.maskRows!.set(new Uint32Array(mask.buffer, mask.byteOffset, expected), slot * words);
    }
  }

  /**
   * Row's table of group g into blockTables[g] at `entries`: from the first block its first token
   * reads in the group's kind (firstReadBlock; a layer's own window is never wider than its
   * group's) to its last position; earlier entries the engine may have given back, so 0.
   */
  private packTable(row: StepRow, g: number, entries: number, numRowBlocks: number): void {
    const { numBlocks, window } = this.limits.kvGroups[g]!;
    const table = row.blockTables[g]!;
    const group = g === 0 ? '' : ` of KV cache group ${g}`;
    if (table.length < numRowBlocks) throw new RangeError(`row ${row.sessionId}: block table${group} holds ${table.length} blocks, position ${row.startPos + row.tokenIds.length - 1} needs ${numRowBlocks}`);
    const firstRead = firstReadBlock(window, this.limits.blockSize, row.startPos);
    for (let b = 0; b < numRowBlocks; b++) {
      const id = b < firstRead ? 0 : table[b]!;
      if (b >= firstRead && !(id >= 1 && id < numBlocks)) throw new RangeError(`row ${row.sessionId}: KV block ${id}${group} (table entry ${b}) outside 1..${numBlocks - 1}`);
      this.blockTables[g]![entries + b] = id;
    }
  }
}
