// The f32 CPU forward pass over one step (K/V stored as the pool's KvCacheType rounds them): every row's tokens fused, each row attending to its own
// paged KV history. Not sampling (sample.ts) and not the ModelRunner wrapper (cpu-runner.ts).
import { KvPool } from './kv-pool';
import {
  embeddingGather,
  geglu,
  kvWrite,
  logitSoftcap,
  matmul,
  pagedAttention,
  residualAdd,
  rmsNorm,
  rope,
  slotMapping,
  swiglu,
  type AttentionLayout,
  type AttentionScoring,
} from './ops';
import type { CpuWeights } from './weights';
import type { ModelConfig } from '../model/desc';
import { firstReadBlock, type StepPlan, type StepRow } from '../engine/types';

/** Activation buffers for up to maxTokens tokens, allocated once and reused every step. */
export class ForwardArena {
  readonly config: ModelConfig;
  readonly maxTokens: number;
  /** [maxTokens, hidden] residual stream */
  readonly x: Float32Array;
  /** [maxTokens, hidden] normed input of a sublayer */
  readonly xNorm: Float32Array;
  /** [maxTokens, numHeads * headDim] */
  readonly q: Float32Array;
  /** [maxTokens, numKvHeads * headDim] */
  readonly k: Float32Array;
  /** [maxTokens, numKvHeads * headDim] */
  readonly v: Float32Array;
  /** [maxTokens, numHeads * headDim] attention output */
  readonly attn: Float32Array;
  /** [maxTokens, hidden] output of o_proj / down_proj */
  readonly delta: Float32Array;
  /** [maxTokens, intermediate] gate, then silu(gate) * up */
  readonly gate: Float32Array;
  /** [maxTokens, intermediate] */
  readonly up: Float32Array;

  constructor(weights: CpuWeights, maxTokens: number) {
    const c = weights.config;
    this.config = c;
    this.maxTokens = maxTokens;
    this.x = new Float32Array(maxTokens * c.hiddenSize);
    this.xNorm = new Float32Array(maxTokens * c.hiddenSize);
    this.q = new Float32Array(maxTokens * c.numHeads * c.headDim);
    this.k = new Float32Array(maxTokens * c.numKvHeads * c.headDim);
    this.v = new Float32Array(maxTokens * c.numKvHeads * c.headDim);
    this.attn = new Float32Array(maxTokens * c.numHeads * c.headDim);
    this.delta = new Float32Array(maxTokens * c.hiddenSize);
    this.gate = new Float32Array(maxTokens * c.intermediateSize);
    this.up = new Float32Array(maxTokens * c.intermediateSize);
  }

  /** Every buffer cut to its first numTokens tokens. */
  forTokens(numTokens: number): StepBuffers {
    const c = this.config;
    const qDim = c.numHeads * c.headDim;
    const kvDim = c.numKvHeads * c.headDim;
    const cut = (buf: Float32Array, width: number): Float32Array => buf.subarray(0, numTokens * width);
    return {
      x: cut(this.x, c.hiddenSize),
      xNorm: cut(this.xNorm, c.hiddenSize),
      q: cut(this.q, qDim),
      k: cut(this.k, kvDim),
      v: cut(this.v, kvDim),
      attn: cut(this.attn, qDim),
      delta: cut(this.delta, c.hiddenSize),
      gate: cut(this.gate, c.intermediateSize),
      up: cut(this.up, c.intermediateSize),
    };
  }
}

/** The arena's buffers for one step's tokens (shapes as on ForwardArena, maxTokens -> numTokens). */
export type StepBuffers = Omit<ForwardArena, 'config' | 'maxTokens' | 'forTokens'>;

export interface ForwardOutput {
  /** Indices into plan.rows of the rows with sample = true, in plan order. */
  sampleRows: number[];
  /** [sampleRows.length, vocab] logits after each sampling row's last token. */
  logits: Float32Array;
}

/** Per-token layout of a step: positions, owning rows, padded block tables, KV slots (through each row's blockTables[group]). */
export function stepLayout(plan: StepPlan, blockSize: number, group = 0): {
  numTokens: number;
  tokenIds: Int32Array;
  layout: Omit<AttentionLayout, 'numHeads' | 'numKvHeads' | 'headDim'>;
  slots: Int32Array;
} {
  const table = (row: StepRow): Int32Array => row.blockTables[group]!;
  const numTokens = plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
  const maxBlocksPerRow = Math.max(1, ...plan.rows.map((row) => table(row).length));
  const tokenIds = new Int32Array(numTokens); // [numTokens]
  const positions = new Int32Array(numTokens); // [numTokens]
  const tokenRows = new Int32Array(numTokens); // [numTokens]
  const blockTables = new Int32Array(plan.rows.length * maxBlocksPerRow); // [numRows, maxBlocksPerRow]
  let t = 0;
  plan.rows.forEach((row, r) => {
    blockTables.set(table(row), r * maxBlocksPerRow);
    for (let j = 0; j < row.tokenIds.length; j++, t++) {
      tokenIds[t] = row.tokenIds[j];
      positions[t] = row.startPos + j;
      tokenRows[t] = r;
    }
  });
  return {
    numTokens,
    tokenIds,
    layout: { blockSize, positions, tokenRows, blockTables, maxBlocksPerRow },
    slots: slotMapping(plan.rows.map((row) => ({ ...row, blockTable: table(row) })), blockSize),
  };
}

/**
 * A step's token layout and activation buffers (the arena's, or new ones when it is too small),
 * after checking that every row feeds tokens into blocks of the pool.
 */
export function beginStep(weights: CpuWeights, kv: KvPool, plan: StepPlan, arena?: ForwardArena): {
  numTokens: number;
  /** [numTokens] */
  tokenIds: Int32Array;
  layout: AttentionLayout;
  /** [numTokens] KV slot of each token in group 0 */
  slots: Int32Array;
  /** [kv.groups] each KV cache group's layout and slots (group 0's are `layout` and `slots`). */
  groups: { layout: AttentionLayout; slots: Int32Array }[];
  buffers: StepBuffers;
} {
  const c = weights.config;
  const heads = { numHeads: c.numHeads, numKvHeads: c.numKvHeads, headDim: c.headDim };
  for (const row of plan.rows) {
    if (row.tokenIds.length === 0) throw new Error(`row ${row.sessionId} feeds no tokens`);
    if (row.blockTables.length !== kv.groups.length) throw new Error(`row ${row.sessionId} has ${row.blockTables.length} block tables for ${kv.groups.length} KV cache groups`);
    const lastBlock = Math.floor((row.startPos + row.tokenIds.length - 1) / kv.blockSize);
    // each table holds blocks from the first one the row's first token reads in that group's kind
    kv.groups.forEach((group, g) => {
      for (let b = firstReadBlock(group.window, kv.blockSize, row.startPos); b <= lastBlock; b++) kv.checkBlock(row.blockTables[g]![b]!, g);
    });
  }
  const a = arena && arena.maxTokens >= numTokensOf(plan) ? arena : new ForwardArena(weights, numTokensOf(plan));
  const groups = kv.groups.map((_, g) => {
    const step = stepLayout(plan, kv.blockSize, g);
    return { numTokens: step.numTokens, tokenIds: step.tokenIds, layout: { ...step.layout, ...heads }, slots: step.slots };
  });
  const first = groups[0]!;
  return {
    numTokens: first.numTokens,
    tokenIds: first.tokenIds,
    layout: first.layout,
    slots: first.slots,
    groups: groups.map(({ layout, slots }) => ({ layout, slots })),
    buffers: a.forTokens(first.numTokens),
  };
}

function numTokensOf(plan: StepPlan): number {
  return plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
}

/**
 * The rows of `plan` that sample, in plan order, and a copy of the residual stream x
 * [numTokens, hidden] after each one's last token: states [sampleRows.length, hidden].
 */
export function lastTokenStates(plan: StepPlan, x: Float32Array, hidden: number): { sampleRows: number[]; states: Float32Array } {
  const sampleRows: number[] = [];
  const lastTokens: number[] = [];
  let end = 0;
  plan.rows.forEach((row, r) => {
    end += row.tokenIds.length;
    if (row.sample) {
      sampleRows.push(r);
      lastTokens.push(end - 1);
    }
  });
  const states = new Float32Array(sampleRows.length * hidden); // [numOut, hidden]
  lastTokens.forEach((t, i) => states.set(x.subarray(t * hidden, (t + 1) * hidden), i * hidden));
  return { sampleRows, states };
}

/**
 * One forward pass over all rows of `plan`: writes every fed token's K/V into `kv` and returns
 * the logits after the last token of each row that samples. Every op treats each token on its
 * own (attention through its own row's block table), so a row's logits are bitwise the same
 * whatever other rows ride in the step.
 */
export function forward(weights: CpuWeights, kv: KvPool, plan: StepPlan, arena?: ForwardArena): ForwardOutput {
  const c = weights.config;
  const hidden = c.hiddenSize;
  const kvDim = c.numKvHeads * c.headDim;
  const eps = c.rmsNormEps;
  const { numTokens: T, tokenIds, groups, buffers } = beginStep(weights, kv, plan, arena);
  const { x, xNorm, q, k, v, attn, delta, gate, up } = buffers; // [T, ...] each, shapes on ForwardArena
  const activation = c.mlpActivation === 'gelu_tanh' ? geglu : swiglu;
  /** x += out, or x += rmsnorm(out) where the architecture norms each sublayer's output (gemma). */
  const addToResidual = (out: Float32Array, outputNorm: Float32Array | null): void => {
    if (outputNorm) rmsNorm(out, outputNorm, T, hidden, eps, out);
    residualAdd(x, out, x);
  };

  // x = embed[tokenIds] * embedScale
  embeddingGather(weights.embed, tokenIds, x, c.embedScale);

  for (let l = 0; l < c.numLayers; l++) {
    const w = weights.layers[l];

    // attention block: x += o_proj(attention(rope(q), rope(k), v)) over rmsnorm(x)
    rmsNorm(x, w.inputNorm, T, hidden, eps, xNorm);
    matmul(xNorm, T, w.q, w.qBias, q);
    matmul(xNorm, T, w.k, w.kBias, k);
    matmul(xNorm, T, w.v, w.vBias, v);
    if (w.qNorm && w.kNorm) {
      // qwen3, gemma3: RMSNorm each head's q and k (weight [headDim] shared by heads) before RoPE
      rmsNorm(q, w.qNorm, T * c.numHeads, c.headDim, eps, q);
      rmsNorm(k, w.kNorm, T * c.numKvHeads, c.headDim, eps, k);
    }
    // each layer reads and writes its own KV cache group's blocks (gemma's sliding layers may have their own)
    const group = groups[kv.layerGroup[l]!]!;
    rope(q, T, c.numHeads, c.headDim, group.layout.positions, w.ropeInvFreq);
    rope(k, T, c.numKvHeads, c.headDim, group.layout.positions, w.ropeInvFreq);
    kvWrite(k, v, group.slots, kvDim, kv.k[l], kv.v[l], kv.kvCacheType);
    pagedAttention(q, T, kv.k[l], kv.v[l], group.layout, attn, layerScoring(c, l));
    matmul(attn, T, w.o, null, delta);
    addToResidual(delta, w.attnOutputNorm);

    // MLP block: x += down(act(gate(h)) * up(h)), h = rmsnorm(x); act silu (SwiGLU) or tanh GELU (GeGLU)
    rmsNorm(x, w.mlpInputNorm, T, hidden, eps, xNorm);
    matmul(xNorm, T, w.gate, null, gate);
    matmul(xNorm, T, w.up, null, up);
    activation(gate, up, T * c.intermediateSize, gate);
    matmul(gate, T, w.down, null, delta);
    addToResidual(delta, w.mlpOutputNorm);
  }

  // logits only after each sampling row's last token: lm_head(rmsnorm(x[last])), soft-capped where the model says
  const { sampleRows, states } = lastTokenStates(plan, x, hidden);
  const numOut = sampleRows.length;
  rmsNorm(states, weights.finalNorm, numOut, hidden, eps, states);
  const logits = new Float32Array(numOut * c.vocabSize); // [numOut, vocab]
  matmul(states, numOut, weights.lmHead, null, logits);
  if (c.finalLogitSoftcap > 0) logitSoftcap(logits, c.finalLogitSoftcap);
  return { sampleRows, logits };
}

/** Layer l's attention scoring from the config: its scale, soft-cap and window. */
export function layerScoring(c: ModelConfig, layer: number): AttentionScoring {
  return { scale: c.attentionScale, softcap: c.attnLogitSoftcap, window: c.layerWindows[layer]! };
}
