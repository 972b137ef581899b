// CpuRunner: the f32 reference ModelRunner (weights dequantized once, paged KV in Float32Arrays).
// Not fast and not a GPU path: it is the oracle the GPU runner is held to, and runs in Node.
import { ForwardArena, forward } from './forward';
import { KvPool } from './kv-pool';
import { sampleToken } from './sample';
import { loadCpuWeights, type CpuWeights } from './weights';
import type { ModelRunner, StepPlan, StepResult } from '../engine/types';
import type { ModelDesc } from '../model/desc';

export interface CpuRunnerOptions {
  /** Token positions per KV block (default 16). */
  blockSize?: number;
  /** KV blocks including the reserved block 0 (default 513: 8,192 positions). */
  numBlocks?: number;
  /** Most tokens per step (default 2,048). */
  maxTokensPerStep?: number;
  /** Most rows per step (default 64). */
  maxRows?: number;
}

/** Logits a step produced, for tests and parity checks that look past the sampled ids. */
export interface CpuStepDetail extends StepResult {
  /** Indices into plan.rows of the rows that sampled, in plan order. */
  sampleRows: number[];
  /** [sampleRows.length, vocab] */
  logits: Float32Array;
}

export class CpuRunner implements ModelRunner {
  readonly blockSize: number;
  readonly numBlocks: number;
  readonly maxTokensPerStep: number;
  readonly maxRows: number;
  /** The model's context (maxPositionEmbeddings): RoPE positions past it were never trained. */
  readonly maxContext: number;
  readonly weights: CpuWeights;
  readonly kv: KvPool;
  private readonly arena: ForwardArena;
  private disposed = false;

  constructor(model: ModelDesc, options: CpuRunnerOptions = {}) {
    this.blockSize = options.blockSize ?? 16;
    this.numBlocks = options.numBlocks ?? 513;
    this.maxTokensPerStep = options.maxTokensPerStep ?? 2048;
    this.maxRows = options.maxRows ?? 64;
    this.weights = loadCpuWeights(model);
    const c = this.weights.config;
    this.maxContext = c.maxPositionEmbeddings;
    this.kv = new KvPool({
      numLayers: c.numLayers,
      numBlocks: this.numBlocks,
      blockSize: this.blockSize,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
    });
    this.arena = new ForwardArena(this.weights, this.maxTokensPerStep);
  }

  execute(plan: StepPlan): Promise<StepResult> {
    try {
      const { sampledIds } = this.executeDetailed(plan);
      return Promise.resolve({ sampledIds });
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** execute(), synchronously, also returning the logits it sampled from. */
  executeDetailed(plan: StepPlan): CpuStepDetail {
    if (this.disposed) throw new Error('CpuRunner used after dispose()');
    const numTokens = plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
    if (plan.rows.length > this.maxRows) throw new RangeError(`${plan.rows.length} rows exceed maxRows ${this.maxRows}`);
    if (numTokens > this.maxTokensPerStep) {
      throw new RangeError(`${numTokens} tokens exceed maxTokensPerStep ${this.maxTokensPerStep}`);
    }
    const sampledIds = new Int32Array(plan.rows.length).fill(-1); // [numRows]
    if (plan.rows.length === 0) return { sampledIds, sampleRows: [], logits: new Float32Array(0) };
    const { sampleRows, logits } = forward(this.weights, this.kv, plan, this.arena);
    const vocab = this.weights.config.vocabSize;
    sampleRows.forEach((r, i) => {
      const row = plan.rows[r];
      const pos = row.startPos + row.tokenIds.length; // position of the token being generated
      sampledIds[r] = sampleToken(logits.subarray(i * vocab, (i + 1) * vocab), row.sampling, pos);
    });
    return { sampledIds, sampleRows, logits };
  }

  dispose(): void {
    this.disposed = true;
  }
}
