// The activation arena: every per-step GPU buffer (residual stream, projections, logits, step
// metadata, readback), sized once for maxTokensPerStep, maxRows and the sampled positions. Not the weights or KV pool.
import type { ModelConfig } from '../model/desc';
import { SAMPLE_HIST_WORDS } from './sample-plan';
import { maskWords } from '../engine/constraints';
import { ATTENTION_ITEM_WORDS, PENALTY_ENTRY_WORDS, PENALTY_INFO_WORDS, ROW_INFO_WORDS, SAMPLE_INFO_WORDS, SAMPLE_LOGPROB_WORDS, TOKEN_INFO_WORDS } from './step-meta';

export interface ActivationSizes {
  maxTokens: number;
  maxRows: number;
  /** Sampled positions a step may hold (step-meta maxSampledPositions: rows plus their drafts) */
  maxSampled: number;
  /** Entries of the concatenated block tables (maxRows * blocks per row) */
  maxBlockTableEntries: number;
  /** KV cache groups of the runner (ModelRunner.kvGroups): a block-table buffer each */
  numKvGroups: number;
  /** Attention work items a step may hold (StepMeta.maxItems) */
  maxAttentionItems: number;
  /** Merge items a step may hold (StepMeta.maxMergeItems) */
  maxMergeItems: number;
  /** Most splits of one query's keys (kernels.ts AttentionShape.maxSplits): every token's states have room for them */
  maxAttentionSplits: number;
  /** u32 words of one sampled position's sampler state (sample-plan.ts samplerShape) */
  sampleStateWords: number;
  /** Penalty entries a step may hold (StepMeta.maxPenaltyEntries) */
  maxPenaltyEntries: number;
}

/** Bytes at the start of the readback buffer for the pass's two u64 timestamps. */
export const READBACK_TIMESTAMP_BYTES = 16;

/** Where the readback holds the logprob slots: after the timestamps and every sampled id, 16-byte aligned. */
export function logprobReadbackOffset(maxSampled: number): number {
  return Math.ceil((READBACK_TIMESTAMP_BYTES + maxSampled * 4) / 16) * 16;
}

export class Activations {
  readonly x: GPUBuffer; // [maxTokens, hidden] residual stream
  readonly h: GPUBuffer; // [maxTokens, hidden] normed input of a sublayer
  readonly qPre: GPUBuffer | null; // [maxTokens, numHeads * headDim] q before qwen3's q_norm
  readonly kPre: GPUBuffer | null; // [maxTokens, kvDim] k before qwen3's k_norm
  readonly q: GPUBuffer; // [maxTokens, numHeads * headDim]
  readonly k: GPUBuffer; // [maxTokens, kvDim]
  readonly v: GPUBuffer; // [maxTokens, kvDim]
  readonly attn: GPUBuffer; // [maxTokens, numHeads * headDim]
  readonly act: GPUBuffer; // [maxTokens, intermediate] silu(gate) * up
  readonly hLast: GPUBuffer; // [maxSampled, hidden] normed token before each sampled position
  readonly logits: GPUBuffer; // [maxSampled, vocab]
  readonly sampleScratch: GPUBuffer; // [maxSampled, vocab] the sampler's fallback weights
  readonly sampleState: GPUBuffer; // [maxSampled, sampleStateWords] u32 chunk argmaxes, radix levels, gathered ids
  readonly sampleHist: GPUBuffer; // [maxSampled, SAMPLE_HIST_WORDS] u32 radix counts, zero between steps
  readonly sampled: GPUBuffer; // [maxSampled] u32 sampled ids
  readonly logprobOut: GPUBuffer; // [maxSampled, SAMPLE_LOGPROB_WORDS] f32 logprob slots of the positions that ask
  readonly penaltyInfo: GPUBuffer; // [maxSampled, PenaltyInfo] the penalized positions
  readonly penaltyEntries: GPUBuffer; // [maxPenaltyEntries, Entry] the penalized rows' entries
  readonly maskPositions: GPUBuffer; // [maxSampled] u32 the constrained positions' logits rows
  readonly masks: GPUBuffer; // [maxSampled, ceil(vocab / 32)] u32 their token bitmasks
  readonly tokens: GPUBuffer; // [maxTokens, TokenInfo]
  readonly rowInfo: GPUBuffer; // [maxRows, RowInfo]
  readonly attentionItems: GPUBuffer; // [maxAttentionItems, WorkItem] paged attention's work items
  readonly mergeItems: GPUBuffer; // [maxMergeItems, WorkItem] the merge pass's items (one per token)
  readonly attentionStates: GPUBuffer; // [maxTokens, numHeads, maxAttentionSplits, 2 + headDim] f32 split states: the worst case, sized once
  readonly blockTables: readonly GPUBuffer[]; // [kvGroups] of [maxBlockTableEntries] u32: each group's pool ids, every row at the same offset in each
  readonly sampleInfo: GPUBuffer; // [maxSampled, SampleInfo]
  readonly sampleTokens: GPUBuffer; // [maxSampled] u32 index of the token each sampled position follows
  readonly unused: GPUBuffer; // [4] f32 bound where a kernel's optional input is off (no bias)
  /** [4] f32 each, bound where a kernel's optional outputs are off (matmul's y2, y3): two, as writable bindings may not alias */
  readonly unusedOut: readonly [GPUBuffer, GPUBuffer];
  private gateUpBuffers: { gate: GPUBuffer; up: GPUBuffer } | null = null; // see gateUp()
  readonly timestamps: GPUBuffer | null; // [2] u64 resolved pass timestamps
  readonly readback: GPUBuffer; // [READBACK_TIMESTAMP_BYTES + maxSampled * 4 + logprobReadbackBytes] MAP_READ: timestamps, ids, logprob slots
  private readonly all: GPUBuffer[] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly c: ModelConfig,
    private readonly s: ActivationSizes,
    withTimestamps: boolean,
  ) {
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const make = (label: string, bytes: number, usage = storage): GPUBuffer => {
      const buffer = device.createBuffer({ label, size: Math.max(16, Math.ceil(bytes / 16) * 16), usage });
      this.all.push(buffer);
      return buffer;
    };
    const f32 = (label: string, n: number): GPUBuffer => make(label, 4 * n);
    const T = s.maxTokens;
    const qDim = c.numHeads * c.headDim;
    const kvDim = c.numKvHeads * c.headDim;
    this.x = f32('x', T * c.hiddenSize);
    this.h = f32('h', T * c.hiddenSize);
    this.qPre = c.qkNorm ? f32('qPre', T * qDim) : null;
    this.kPre = c.qkNorm ? f32('kPre', T * kvDim) : null;
    this.q = f32('q', T * qDim);
    this.k = f32('k', T * kvDim);
    this.v = f32('v', T * kvDim);
    this.attn = f32('attn', T * qDim);
    this.act = f32('act', T * c.intermediateSize);
    this.hLast = f32('hLast', s.maxSampled * c.hiddenSize);
    this.logits = f32('logits', s.maxSampled * c.vocabSize);
    this.sampleScratch = f32('sampleScratch', s.maxSampled * c.vocabSize);
    this.sampleState = make('sampleState', s.maxSampled * s.sampleStateWords * 4);
    this.sampleHist = make('sampleHist', s.maxSampled * SAMPLE_HIST_WORDS * 4); // created zeroed, as the sampler needs
    this.sampled = f32('sampled', s.maxSampled);
    this.logprobOut = f32('logprobOut', s.maxSampled * SAMPLE_LOGPROB_WORDS);
    this.penaltyInfo = make('penaltyInfo', s.maxSampled * PENALTY_INFO_WORDS * 4);
    this.penaltyEntries = make('penaltyEntries', s.maxPenaltyEntries * PENALTY_ENTRY_WORDS * 4);
    this.maskPositions = make('maskPositions', s.maxSampled * 4);
    this.masks = make('masks', s.maxSampled * maskWords(c.vocabSize) * 4);
    this.tokens = make('tokens', T * TOKEN_INFO_WORDS * 4);
    this.rowInfo = make('rowInfo', s.maxRows * ROW_INFO_WORDS * 4);
    this.attentionItems = make('attentionItems', s.maxAttentionItems * ATTENTION_ITEM_WORDS * 4);
    this.mergeItems = make('mergeItems', s.maxMergeItems * ATTENTION_ITEM_WORDS * 4);
    this.attentionStates = f32('attentionStates', T * c.numHeads * s.maxAttentionSplits * (2 + c.headDim));
    this.blockTables = Array.from({ length: s.numKvGroups }, (_, g) => make(g === 0 ? 'blockTables' : `blockTables-${g}`, s.maxBlockTableEntries * 4));
    this.sampleInfo = make('sampleInfo', s.maxSampled * SAMPLE_INFO_WORDS * 4);
    this.sampleTokens = make('sampleTokens', s.maxSampled * 4);
    this.unused = f32('unused', 4);
    this.unusedOut = [f32('unusedOut2', 4), f32('unusedOut3', 4)];
    this.timestamps = withTimestamps ? make('timestamps', READBACK_TIMESTAMP_BYTES, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC) : null;
    this.readback = make('readback', logprobReadbackOffset(s.maxSampled) + s.maxSampled * SAMPLE_LOGPROB_WORDS * 4, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  }

  /**
   * [maxTokens, intermediate] each: gate_proj and up_proj apart, for a model whose gate and up are
   * stored in different dtypes (no GLU store); made on first use so other models never hold them.
   */
  gateUp(): { gate: GPUBuffer; up: GPUBuffer } {
    if (!this.gateUpBuffers) {
      const bytes = Math.ceil((4 * this.s.maxTokens * this.c.intermediateSize) / 16) * 16;
      const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
      this.gateUpBuffers = { gate: this.device.createBuffer({ label: 'gate', size: bytes, usage }), up: this.device.createBuffer({ label: 'up', size: bytes, usage }) };
      this.all.push(this.gateUpBuffers.gate, this.gateUpBuffers.up);
    }
    return this.gateUpBuffers;
  }

  get bytes(): number {
    return this.all.reduce((n, b) => n + b.size, 0);
  }

  destroy(): void {
    for (const buffer of this.all) buffer.destroy();
  }
}
