// CpuRunner: the f32 reference ModelRunner (weights dequantized once, paged KV in Float32Arrays
// holding its kvCacheType's rounded values).
// Not fast and not a GPU path: it is the oracle the GPU runner is held to, and runs in Node.
import { ForwardArena, forward } from './forward';
import { KvPool } from './kv-pool';
import { sampleToken } from './sample';
import { sampledLogprobs } from './logprobs';
import { applyPenalties } from './penalties';
import { applyTokenMask } from './token-mask';
import { loadCpuWeights, type CpuWeights } from './weights';
import { hasPenalties, penaltyEntries, type PenaltyEntries } from '../engine/penalties';
import { sampledPosition, sampledRows, splitSampledIds } from '../engine/sampled-positions';
import { DEFAULT_MAX_DRAFT_TOKENS, slidingGroupBlocks, type KvCacheGroupSpec, type ModelRunner, type SampledLogprobs, type StepMaskFill, type StepPlan, type StepResult, type StepRow } from '../engine/types';
import type { ModelDesc } from '../model/desc';
import { DEFAULT_KV_CACHE_TYPE, kvCacheTypeProblem, type KvCacheType } from '../engine/kv-types';

export interface CpuRunnerOptions {
  /** Token positions per KV block (default 16). */
  blockSize?: number;
  /** KV blocks including the reserved block 0 (default 513: 8,192 positions). */
  numBlocks?: number;
  /** Most tokens per step (default 2,048). */
  maxTokensPerStep?: number;
  /** Most rows per step (default 64). */
  maxRows?: number;
  /** Drafted tokens a row may carry for verification (default 8; 0: none). */
  maxDraftTokens?: number;
  /** How the KV pool stores K and V (default DEFAULT_KV_CACHE_TYPE, f16), rounded as GpuRunner rounds them. */
  kvCacheType?: KvCacheType;
  /**
   * Models with sliding-window layers: keep those layers' K/V in a KV cache group of their own
   * whose blocks the engine gives back out of the window (default true); false: one group, every
   * position of every layer kept, the window only masking.
   */
  windowKv?: boolean;
}

/** Logits a step produced, for tests and parity checks that look past the sampled ids. */
export interface CpuStepDetail extends StepResult {
  /**
   * Indices into plan.rows of the rows that sampled, in plan order; a row with k drafts appears
   * k + 1 times (after its last known token, then after each draft).
   */
  sampleRows: number[];
  /** [sampleRows.length, vocab] logits at each sampled position */
  logits: Float32Array;
}

export class CpuRunner implements ModelRunner {
  readonly blockSize: number;
  readonly numBlocks: number;
  readonly maxTokensPerStep: number;
  readonly maxRows: number;
  /** The model's context (maxPositionEmbeddings): RoPE positions past it were never trained. */
  readonly maxContext: number;
  readonly maxDraftTokens: number;
  readonly kvGroups: readonly KvCacheGroupSpec[];
  /** The KV pool's storage type. */
  readonly kvCacheType: KvCacheType;
  readonly weights: CpuWeights;
  readonly kv: KvPool;
  private readonly arena: ForwardArena;
  private disposed = false;

  constructor(model: ModelDesc, options: CpuRunnerOptions = {}) {
    this.blockSize = options.blockSize ?? 16;
    this.numBlocks = options.numBlocks ?? 513;
    this.maxTokensPerStep = options.maxTokensPerStep ?? 2048;
    this.maxRows = options.maxRows ?? 64;
    this.maxDraftTokens = options.maxDraftTokens ?? DEFAULT_MAX_DRAFT_TOKENS;
    this.kvCacheType = options.kvCacheType ?? DEFAULT_KV_CACHE_TYPE;
    const kvProblem = kvCacheTypeProblem(this.kvCacheType, model.config.numKvHeads * model.config.headDim);
    if (kvProblem) throw new Error(`kvCacheType ${this.kvCacheType}: ${kvProblem}`);
    this.weights = loadCpuWeights(model);
    const c = this.weights.config;
    this.maxContext = c.maxPositionEmbeddings;
    // the sliding layers in a group of their own, of the largest window, when asked (the default)
    const window = Math.max(0, ...c.layerWindows);
    const sliding = window > 0 && (options.windowKv ?? true);
    this.kvGroups = [
      { numBlocks: this.numBlocks, window: null },
      ...(sliding ? [{ numBlocks: slidingGroupBlocks(window, this.blockSize, this.maxRows, this.maxTokensPerStep), window }] : []),
    ];
    this.kv = new KvPool({
      numLayers: c.numLayers,
      blockSize: this.blockSize,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      kvCacheType: this.kvCacheType,
      groups: this.kvGroups,
      layerGroup: c.layerWindows.map((w) => (sliding && w > 0 ? 1 : 0)),
    });
    this.arena = new ForwardArena(this.weights, this.maxTokensPerStep);
  }

  /** The forward, then the masks' fill (StepMaskFill) at the point GpuRunner calls it, then the sampling. */
  async execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    const forwarded = this.forwardStep(plan);
    if (masks) await masks.fill();
    const { sampledIds, draftSampledIds, logprobs } = this.sampleStep(plan, forwarded);
    return { sampledIds, ...(draftSampledIds ? { draftSampledIds } : {}), ...(logprobs ? { logprobs } : {}) };
  }

  /** execute(), synchronously, also returning the logits it sampled from (after penalties and bias). */
  executeDetailed(plan: StepPlan): CpuStepDetail {
    return this.sampleStep(plan, this.forwardStep(plan));
  }

  /** The plan's checks and its forward: the logits at each sampled position (null for an empty plan). */
  private forwardStep(plan: StepPlan): { sampleRows: number[]; logits: Float32Array } | null {
    if (this.disposed) throw new Error('CpuRunner used after dispose()');
    const numTokens = plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
    if (plan.rows.length > this.maxRows) throw new RangeError(`${plan.rows.length} rows exceed maxRows ${this.maxRows}`);
    if (numTokens > this.maxTokensPerStep) {
      throw new RangeError(`${numTokens} tokens exceed maxTokensPerStep ${this.maxTokensPerStep}`);
    }
    if (plan.rows.length === 0) return null;
    const hasDrafts = plan.rows.some((row) => (row.numDraftTokens ?? 0) > 0);
    // Verify rows: the forward runs every token on its own (attention through its row's block
    // table, every K/V written before any is read), so a row cut into its known tokens and one
    // sampling row per draft yields the logits at each of those positions, bitwise as plain decode.
    const rows = hasDrafts ? splitDraftRows(plan.rows, this.maxDraftTokens) : plan.rows;
    const { sampleRows: forwardRows, logits } = forward(this.weights, this.kv, { stepIndex: plan.stepIndex, rows }, this.arena);
    // the forward's sampling rows, in order, are the plan's sampled positions (sampled-positions.ts)
    const sampleRows = sampledRows(plan.rows);
    if (forwardRows.length !== sampleRows.length) throw new Error(`forward sampled ${forwardRows.length} positions, the plan ${sampleRows.length}`);
    return { sampleRows, logits };
  }

  /** Samples every sampled position of the plan from the forward's logits (in place: mask, penalties). */
  private sampleStep(plan: StepPlan, forwarded: { sampleRows: number[]; logits: Float32Array } | null): CpuStepDetail {
    if (!forwarded) return { sampledIds: new Int32Array(0), sampleRows: [], logits: new Float32Array(0) };
    const { sampleRows, logits } = forwarded;
    const vocab = this.weights.config.vocabSize;
    const sampler = new PositionSampler(plan.rows, vocab);
    const ids = new Int32Array(sampleRows.length); // [sampled positions]
    let i = 0; // drafts fed before this position
    sampleRows.forEach((r, p) => {
      i = p > 0 && sampleRows[p - 1] === r ? i + 1 : 0;
      ids[p] = sampler.sample(r, logits.subarray(p * vocab, (p + 1) * vocab), sampledPosition(plan.rows[r], i), i);
    });
    return { ...splitSampledIds(plan.rows, ids), sampleRows, logits, ...sampler.result() };
  }

  dispose(): void {
    this.disposed = true;
  }
}

/**
 * Samples a step's positions as the GPU does: a constrained row's token mask (token-mask.ts, the
 * twin of token_mask.wgsl), then its penalties and bias (the twin of penalties.wgsl) on its logits in place, the draw (sample.ts), and its logprobs (logprobs.ts)
 * from those same logits. Each position's logits are its own: nothing depends on other rows.
 */
class PositionSampler {
  private readonly entries = new Map<number, PenaltyEntries>();
  private readonly logprobs: (SampledLogprobs[] | undefined)[];
  private anyLogprobs = false;

  constructor(
    private readonly rows: readonly StepRow[],
    private readonly vocab: number,
  ) {
    this.logprobs = rows.map(() => undefined);
  }

  /** Row r's i-th sampled position's token (drafts fed before it: `after`), generated at `pos`, from `logits` [vocab]. */
  sample(r: number, logits: Float32Array, pos: number, after: number): number {
    const row = this.rows[r]!;
    if (row.tokenBitmask) applyTokenMask(logits, row.tokenBitmask, after); // the constraint first, as token_mask.wgsl runs first
    if (hasPenalties(row.sampling)) {
      let entries = this.entries.get(r);
      if (!entries) {
        entries = penaltyEntries(row.sampling, row.penaltyTokens, row.numPromptTokens ?? 0, this.vocab);
        this.entries.set(r, entries);
      }
      const k = row.numDraftTokens ?? 0;
      applyPenalties(logits, row.sampling, entries, row.tokenIds.subarray(row.tokenIds.length - k, row.tokenIds.length - k + after));
    }
    const id = sampleToken(logits, row.sampling, pos);
    if (row.sampling.logprobs !== undefined && id >= 0) {
      (this.logprobs[r] ??= []).push(sampledLogprobs(logits, row.sampling.temperature, id, row.sampling.logprobs));
      this.anyLogprobs = true;
    }
    return id;
  }

  result(): { logprobs?: (SampledLogprobs[] | undefined)[] } {
    return this.anyLogprobs ? { logprobs: this.logprobs } : {};
  }
}

/**
 * A plan's rows with each verify row cut in two kinds: its known tokens (sampling after the last)
 * and one single-token sampling row per draft, at consecutive positions through the same block
 * table: their sampling rows are the plan's sampled positions, in order.
 */
function splitDraftRows(planRows: readonly StepRow[], maxDraftTokens: number): StepRow[] {
  const rows: StepRow[] = [];
  planRows.forEach((row) => {
    const k = row.numDraftTokens ?? 0;
    if (k === 0) {
      rows.push(row);
      return;
    }
    if (k > maxDraftTokens || !row.sample || k >= row.tokenIds.length) {
      throw new RangeError(`row ${row.sessionId} carries ${k} drafts (maxDraftTokens ${maxDraftTokens}, ${row.tokenIds.length} tokens, sample ${row.sample})`);
    }
    const numKnown = row.tokenIds.length - k;
    const { numDraftTokens: _drafts, ...plain } = row;
    rows.push({ ...plain, tokenIds: row.tokenIds.subarray(0, numKnown) });
    for (let j = 0; j < k; j++) {
      rows.push({ ...plain, tokenIds: row.tokenIds.subarray(numKnown + j, numKnown + j + 1), startPos: row.startPos + numKnown + j });
    }
  });
  return rows;
}
