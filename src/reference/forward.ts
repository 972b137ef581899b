// The f32 CPU forward pass over one step: every row's tokens fused, each row attending to its own
// paged KV history. Not sampling (sample.ts) and not the ModelRunner wrapper (cpu-runner.ts).
import { KvPool } from './kv-pool';
import {
  embeddingGather,
  kvWrite,
  matmul,
  pagedAttention,
  residualAdd,
  rmsNorm,
  rope,
  slotMapping,
  swiglu,
  type AttentionLayout,
} from './ops';
import { llamaCppAttention, llamaCppRmsNorm, llamaCppRope, llamaCppSwiglu } from './llama-cpp-ops';
import type { CpuWeights } from './weights';
import type { StepPlan } from '../engine/types';

/** The non-matmul ops of a forward pass: the reference's own, or llama.cpp's exact f32 orders. */
interface ForwardOps {
  rmsNorm: typeof rmsNorm;
  swiglu: typeof swiglu;
  rope(x: Float32Array, numTokens: number, numHeads: number, positions: Int32Array): void;
  attention: typeof pagedAttention;
  /** llama.cpp runs the last layer's FFN on output tokens only, so as one-token matmuls. */
  lastFfnPerToken: boolean;
}

const opsByWeights = new WeakMap<CpuWeights, ForwardOps>();

/** Chosen once per weights (not per step): the emulation is fixed when the weights load. */
function forwardOps(weights: CpuWeights): ForwardOps {
  let ops = opsByWeights.get(weights);
  if (!ops) opsByWeights.set(weights, (ops = makeForwardOps(weights)));
  return ops;
}

function makeForwardOps(weights: CpuWeights): ForwardOps {
  const c = weights.config;
  const own: ForwardOps = {
    rmsNorm,
    swiglu,
    rope: (x, numTokens, numHeads, positions) => rope(x, numTokens, numHeads, c.headDim, positions, weights.ropeInvFreq),
    attention: pagedAttention,
    lastFfnPerToken: false,
  };
  if (weights.emulateLlamaCpp !== 'x86-amx') return own;
  return {
    rmsNorm: llamaCppRmsNorm,
    swiglu: llamaCppSwiglu,
    // Llama-3 frequency factors are not emulated: such models keep the reference's rope.
    rope: c.ropeScaling ? own.rope : (x, numTokens, numHeads, positions) => llamaCppRope(x, numTokens, numHeads, c.headDim, positions, c.ropeTheta),
    attention: (q, numTokens, kCache, vCache, layout, out) => llamaCppAttention(q, numTokens, kCache, vCache, { ...layout, interleavedQK: c.arch === 'llama' }, out),
    lastFfnPerToken: true,
  };
}

/** Activation buffers for up to maxTokens tokens, allocated once and reused every step. */
export class ForwardArena {
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
}

export interface ForwardOutput {
  /** Indices into plan.rows of the rows with sample = true, in plan order. */
  sampleRows: number[];
  /** [sampleRows.length, vocab] logits after each sampling row's last token. */
  logits: Float32Array;
}

/** Per-token layout of a step: positions, owning rows, padded block tables, KV slots. */
export function stepLayout(plan: StepPlan, blockSize: number): {
  numTokens: number;
  tokenIds: Int32Array;
  layout: Omit<AttentionLayout, 'numHeads' | 'numKvHeads' | 'headDim'>;
  slots: Int32Array;
} {
  const numTokens = plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
  const maxBlocksPerRow = Math.max(1, ...plan.rows.map((row) => row.blockTable.length));
  const tokenIds = new Int32Array(numTokens); // [numTokens]
  const positions = new Int32Array(numTokens); // [numTokens]
  const tokenRows = new Int32Array(numTokens); // [numTokens]
  const blockTables = new Int32Array(plan.rows.length * maxBlocksPerRow); // [numRows, maxBlocksPerRow]
  let t = 0;
  plan.rows.forEach((row, r) => {
    blockTables.set(row.blockTable, r * maxBlocksPerRow);
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
    slots: slotMapping(plan.rows, blockSize),
  };
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
  const inter = c.intermediateSize;
  const kvDim = c.numKvHeads * c.headDim;
  const { numTokens, tokenIds, layout: stepLayoutPart, slots } = stepLayout(plan, kv.blockSize);
  const layout: AttentionLayout = { ...stepLayoutPart, numHeads: c.numHeads, numKvHeads: c.numKvHeads, headDim: c.headDim };
  for (const row of plan.rows) {
    if (row.tokenIds.length === 0) throw new Error(`row ${row.sessionId} feeds no tokens`);
    const lastBlock = Math.floor((row.startPos + row.tokenIds.length - 1) / kv.blockSize);
    for (let b = 0; b <= lastBlock; b++) kv.checkBlock(row.blockTable[b]);
  }
  const ops = forwardOps(weights);
  const a = arena && arena.maxTokens >= numTokens ? arena : new ForwardArena(weights, numTokens);
  const T = numTokens;
  const x = a.x.subarray(0, T * hidden); // [T, hidden]
  const xNorm = a.xNorm.subarray(0, T * hidden); // [T, hidden]
  const q = a.q.subarray(0, T * c.numHeads * c.headDim); // [T, numHeads, headDim]
  const k = a.k.subarray(0, T * kvDim); // [T, numKvHeads, headDim]
  const v = a.v.subarray(0, T * kvDim); // [T, numKvHeads, headDim]
  const attn = a.attn.subarray(0, T * c.numHeads * c.headDim); // [T, numHeads * headDim]
  const delta = a.delta.subarray(0, T * hidden); // [T, hidden]
  const gate = a.gate.subarray(0, T * inter); // [T, intermediate]
  const up = a.up.subarray(0, T * inter); // [T, intermediate]

  // x = embed[tokenIds]
  embeddingGather(weights.embed, tokenIds, x);

  for (let l = 0; l < c.numLayers; l++) {
    const w = weights.layers[l];

    // attention block: x += o_proj(attention(rope(q), rope(k), v)) over rmsnorm(x)
    ops.rmsNorm(x, w.inputNorm, T, hidden, c.rmsNormEps, xNorm);
    matmul(xNorm, T, w.q, w.qBias, q);
    matmul(xNorm, T, w.k, w.kBias, k);
    matmul(xNorm, T, w.v, w.vBias, v);
    if (w.qNorm && w.kNorm) {
      // qwen3: RMSNorm each head's q and k (weight [headDim] shared by heads) before RoPE
      ops.rmsNorm(q, w.qNorm, T * c.numHeads, c.headDim, c.rmsNormEps, q);
      ops.rmsNorm(k, w.kNorm, T * c.numKvHeads, c.headDim, c.rmsNormEps, k);
    }
    ops.rope(q, T, c.numHeads, layout.positions);
    ops.rope(k, T, c.numKvHeads, layout.positions);
    kvWrite(k, v, slots, kvDim, kv.k[l], kv.v[l]);
    ops.attention(q, T, kv.k[l], kv.v[l], layout, attn);
    matmul(attn, T, w.o, null, delta);
    residualAdd(x, delta, x);

    // MLP block: x += down(silu(gate(h)) * up(h)), h = rmsnorm(x), over tokens [from, from + n)
    ops.rmsNorm(x, w.postAttentionNorm, T, hidden, c.rmsNormEps, xNorm);
    const mlp = (from: number, n: number): void => {
      const h = xNorm.subarray(from * hidden, (from + n) * hidden);
      const g = gate.subarray(from * inter, (from + n) * inter);
      const u = up.subarray(from * inter, (from + n) * inter);
      matmul(h, n, w.gate, null, g);
      matmul(h, n, w.up, null, u);
      ops.swiglu(g, u, n * inter, g);
      matmul(g, n, w.down, null, delta.subarray(from * hidden, (from + n) * hidden));
    };
    if (ops.lastFfnPerToken && l === c.numLayers - 1) for (let t = 0; t < T; t++) mlp(t, 1);
    else mlp(0, T);
    residualAdd(x, delta, x);
  }

  // logits only after each sampling row's last token: lm_head(rmsnorm(x[last]))
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
  const numOut = sampleRows.length;
  const lastHidden = new Float32Array(numOut * hidden); // [numOut, hidden]
  lastTokens.forEach((t, i) => lastHidden.set(x.subarray(t * hidden, (t + 1) * hidden), i * hidden));
  ops.rmsNorm(lastHidden, weights.finalNorm, numOut, hidden, c.rmsNormEps, lastHidden);
  const logits = new Float32Array(numOut * c.vocabSize); // [numOut, vocab]
  matmul(lastHidden, numOut, weights.lmHead, null, logits);
  return { sampleRows, logits };
}
