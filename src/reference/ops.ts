// CPU twins of the WGSL kernels, one function per kernel, in f32 storage with f64 accumulation.
// Not the forward pass (forward.ts strings these together) and not dequantization (dequant.ts).
//
// Numerics shared by every op (the GPU twins are held to these within a tolerance):
// - Buffers are Float32Array; every stored value is rounded to f32. Sums run in JS doubles and
//   are rounded once when stored.
// - Every reduction runs in ascending index order over one token's own data. Nothing depends
//   on which other tokens or rows are in the step, so a row's results are bitwise identical
//   whatever else rides in the cohort (batch invariance).
import { dequantizeRow } from './dequant';
import { roundKvValues } from './kv-rounding';
import type { TensorDesc } from '../model/desc';
import type { KvCacheType } from '../engine/kv-types';

/** A dense f32 matrix [rows, cols], cols contiguous (HF's [out, in] for weights). */
export interface Matrix {
  rows: number;
  cols: number;
  /** [rows, cols] */
  data: Float32Array;
}

/**
 * embedding gather: out[t, :] = table[tokenIds[t], :] * scale (scale: ModelConfig.embedScale, f32).
 * table [vocab, hidden]; tokenIds [numTokens]; out [numTokens, hidden].
 */
export function embeddingGather(table: Matrix, tokenIds: Int32Array, out: Float32Array, scale = 1): void {
  const hidden = table.cols;
  for (let t = 0; t < tokenIds.length; t++) {
    const id = tokenIds[t];
    if (id < 0 || id >= table.rows) throw new RangeError(`token id ${id} outside vocab ${table.rows}`);
    out.set(table.data.subarray(id * hidden, (id + 1) * hidden), t * hidden);
    // gemma's sqrt(hidden): one f32 product per value, as embedding.wgsl's SCALE store
    if (scale !== 1) for (let i = t * hidden; i < (t + 1) * hidden; i++) out[i] = Math.fround(out[i] * scale);
  }
}

/**
 * RMSNorm over the last dim: out[v, i] = weight[i] * (x[v, i] / sqrt(mean_i(x[v, :]^2) + eps)).
 * x, out [numVecs, dim] (may alias); weight [dim].
 * For qwen3's q/k norm pass numVecs = numTokens * numHeads and dim = headDim: the same weight
 * applies to every head.
 */
export function rmsNorm(
  x: Float32Array,
  weight: Float32Array,
  numVecs: number,
  dim: number,
  eps: number,
  out: Float32Array,
): void {
  for (let v = 0; v < numVecs; v++) {
    const base = v * dim;
    let sumSq = 0;
    for (let i = 0; i < dim; i++) sumSq += x[base + i] * x[base + i];
    const invRms = 1 / Math.sqrt(sumSq / dim + eps);
    for (let i = 0; i < dim; i++) out[base + i] = weight[i] * (x[base + i] * invRms);
  }
}

/**
 * Dot product of a[aBase..aBase+n) and b[bBase..bBase+n) in the fixed order every matmul and
 * attention score uses: four lanes (lane j sums the elements at indices = j mod 4, ascending),
 * combined as (lane0 + lane1) + (lane2 + lane3). This is the shape of a vec4 accumulator on the
 * GPU, and on the CPU it runs ~2x faster than one serial sum.
 */
export function dot(a: Float32Array, aBase: number, b: Float32Array, bBase: number, n: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const n4 = n - (n % 4);
  let i = 0;
  for (; i < n4; i += 4) {
    s0 += a[aBase + i] * b[bBase + i];
    s1 += a[aBase + i + 1] * b[bBase + i + 1];
    s2 += a[aBase + i + 2] * b[bBase + i + 2];
    s3 += a[aBase + i + 3] * b[bBase + i + 3];
  }
  if (i < n) s0 += a[aBase + i] * b[bBase + i];
  if (i + 1 < n) s1 += a[aBase + i + 1] * b[bBase + i + 1];
  if (i + 2 < n) s2 += a[aBase + i + 2] * b[bBase + i + 2];
  return s0 + s1 + (s2 + s3);
}

/**
 * matmul against a stored-layout weight: out[t, r] = dot(x[t, :], w[r, :]) (+ bias[r]).
 * x [numTokens, w.cols]; w [rows, cols] (HF [out, in]); bias [rows] or null;
 * out [numTokens, w.rows] (must not alias x). Each output is one dot() then the bias.
 */
export function matmul(
  x: Float32Array,
  numTokens: number,
  w: Matrix,
  bias: Float32Array | null,
  out: Float32Array,
): void {
  const { rows, cols, data } = w;
  for (let r = 0; r < rows; r++) {
    const b = bias ? bias[r] : 0;
    for (let t = 0; t < numTokens; t++) out[t * rows + r] = dot(x, t * cols, data, r * cols, cols) + b;
  }
}

/**
 * The same matmul reading a quantized tensor directly, dequantizing one row at a time with
 * dequantizeRow: the literal twin of the GPU kernel that dequantizes inside the matmul.
 * Gives bitwise the same result as matmul(x, dequantize(w)).
 * x [numTokens, cols]; w [rows, cols] in its stored dtype; out [numTokens, rows].
 */
export function matmulQuant(
  x: Float32Array,
  numTokens: number,
  w: TensorDesc,
  bias: Float32Array | null,
  out: Float32Array,
): void {
  const [rows, cols] = w.shape;
  const rowF32 = new Float32Array(cols); // [cols]
  for (let r = 0; r < rows; r++) {
    dequantizeRow(w, r, rowF32);
    const b = bias ? bias[r] : 0;
    for (let t = 0; t < numTokens; t++) out[t * rows + r] = dot(x, t * cols, rowF32, 0, cols) + b;
  }
}

/**
 * RoPE in HF's rotate-half layout, in place: within each head, element i pairs with i + half.
 * angle = positions[t] * invFreq[i];
 *   x'[i]        = x[i] * cos(angle) - x[i + half] * sin(angle)
 *   x'[i + half] = x[i + half] * cos(angle) + x[i] * sin(angle)
 * x [numTokens, numHeads, headDim]; positions [numTokens] (each token its own position, so rows
 * at different offsets share one launch); invFreq [headDim / 2] from src/model/rope.ts.
 */
export function rope(
  x: Float32Array,
  numTokens: number,
  numHeads: number,
  headDim: number,
  positions: Int32Array,
  invFreq: Float32Array,
): void {
  const half = headDim / 2;
  for (let t = 0; t < numTokens; t++) {
    const pos = positions[t];
    for (let i = 0; i < half; i++) {
      const angle = pos * invFreq[i];
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      for (let h = 0; h < numHeads; h++) {
        const base = (t * numHeads + h) * headDim;
        const a = x[base + i];
        const b = x[base + i + half];
        x[base + i] = a * cos - b * sin;
        x[base + i + half] = b * cos + a * sin;
      }
    }
  }
}

/**
 * Flat KV slot of every token of the step: slot = blockTable[floor(pos / blockSize)] * blockSize
 * + pos % blockSize, rows' tokens concatenated in plan order. Returns [numTokens].
 */
export function slotMapping(
  rows: ReadonlyArray<{ startPos: number; tokenIds: Int32Array; blockTable: Int32Array }>,
  blockSize: number,
): Int32Array {
  const numTokens = rows.reduce((n, row) => n + row.tokenIds.length, 0);
  const slots = new Int32Array(numTokens); // [numTokens]
  let t = 0;
  for (const row of rows) {
    for (let j = 0; j < row.tokenIds.length; j++) {
      const pos = row.startPos + j;
      const blockIdx = Math.floor(pos / blockSize);
      if (blockIdx >= row.blockTable.length) throw new RangeError(`position ${pos} beyond the row's block table`);
      slots[t++] = row.blockTable[blockIdx] * blockSize + (pos % blockSize);
    }
  }
  return slots;
}

/**
 * kv write: each token's K and V into its slot of one layer's paged cache, rounded as the pool's
 * `kvCacheType` stores them (roundKvValues: f16, q8_0 blocks of 32 along kvDim; f32 as is).
 * k, v [numTokens, numKvHeads * headDim]; slots [numTokens] from slotMapping;
 * kCache, vCache [numBlocks, blockSize, numKvHeads, headDim] = [numBlocks * blockSize, kvDim].
 */
export function kvWrite(
  k: Float32Array,
  v: Float32Array,
  slots: Int32Array,
  kvDim: number,
  kCache: Float32Array,
  vCache: Float32Array,
  kvCacheType: KvCacheType,
): void {
  for (let t = 0; t < slots.length; t++) {
    const dst = slots[t] * kvDim;
    roundKvValues(kvCacheType, k, t * kvDim, kvDim, kCache, dst);
    roundKvValues(kvCacheType, v, t * kvDim, kvDim, vCache, dst);
  }
}

/** Step layout that paged attention needs to find each token's history. */
export interface AttentionLayout {
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  blockSize: number;
  /** [numTokens] sequence position of each token (its row's startPos + index in the row). */
  positions: Int32Array;
  /** [numTokens] index of the row each token belongs to. */
  tokenRows: Int32Array;
  /** [numRows, maxBlocksPerRow] block tables, padded with 0 (the reserved block). */
  blockTables: Int32Array;
  maxBlocksPerRow: number;
}

/**
/** How paged attention scores a key: scale, soft-cap and window (ModelConfig's attention fields of one layer). */
export interface AttentionScoring {
  /** Multiplier of q . k: ModelConfig.attentionScale. */
  scale: number;
  /** s -> softcap * tanh(s / softcap) when > 0 (gemma2's attn_logit_softcapping). */
  softcap: number;
  /** Keys at positions p - window + 1 .. p only when > 0 (the layer's sliding window). */
  window: number;
}

/** Scaled by 1 / sqrt(headDim), no cap, no window: llama's attention. */
export function plainScoring(headDim: number): AttentionScoring {
  return { scale: 1 / Math.sqrt(headDim), softcap: 0, window: 0 };
}

/** The first key position a query at `pos` attends to under a window of `window` (0: all). */
export function windowStart(pos: number, window: number): number {
  return window > 0 ? Math.max(0, pos - window + 1) : 0;
}

/**
 * Paged causal attention, decode rows and prefill chunks alike. For token t at position p of
 * row r, head h (KV head kh = floor(h / (numHeads / numKvHeads)), GQA):
 *   s_j = cap(scale * (q[t, h, :] . K_r[j, kh, :]))   for j = windowStart(p, window)..p
 *   (cap(s) = softcap * tanh(s / softcap) when softcap > 0, else s)
 *   w_j = exp(s_j - max_j s_j) / sum_j exp(s_j - max_j s_j)
 *   out[t, h, :] = sum_j w_j * V_r[j, kh, :]
 * where K_r[j] lives at slot blockTables[r, floor(j / blockSize)] * blockSize + j % blockSize.
 * The step's own K/V must already be written (kvWrite) so a prefill chunk sees itself.
 * q [numTokens, numHeads, headDim]; kCache, vCache [numBlocks, blockSize, numKvHeads, headDim];
 * out [numTokens, numHeads, headDim]. q . k is dot(); the softmax and V sums run over j ascending.
 */
export function pagedAttention(
  q: Float32Array,
  numTokens: number,
  kCache: Float32Array,
  vCache: Float32Array,
  layout: AttentionLayout,
  out: Float32Array,
  scoring: AttentionScoring = plainScoring(layout.headDim),
): void {
  const { numHeads, numKvHeads, headDim, blockSize, positions, tokenRows, blockTables, maxBlocksPerRow } = layout;
  const groupSize = numHeads / numKvHeads;
  const kvDim = numKvHeads * headDim;
  const { scale, softcap, window } = scoring;
  let scores = new Float64Array(0); // [p + 1] per (token, head)
  const acc = new Float64Array(headDim); // [headDim]
  for (let t = 0; t < numTokens; t++) {
    const pos = positions[t];
    const first = windowStart(pos, window); // keys before it are outside the window: never read
    const tableBase = tokenRows[t] * maxBlocksPerRow;
    if (scores.length < pos + 1) scores = new Float64Array(pos + 1);
    for (let h = 0; h < numHeads; h++) {
      const qBase = (t * numHeads + h) * headDim;
      const kvHeadOffset = Math.floor(h / groupSize) * headDim;
      let maxScore = -Infinity;
      for (let j = first; j <= pos; j++) {
        const slot = blockTables[tableBase + Math.floor(j / blockSize)] * blockSize + (j % blockSize);
        const kBase = slot * kvDim + kvHeadOffset;
        const raw = dot(q, qBase, kCache, kBase, headDim) * scale;
        const s = softcap > 0 ? softcap * Math.tanh(raw / softcap) : raw;
        scores[j] = s;
        if (s > maxScore) maxScore = s;
      }
      let sumExp = 0;
      acc.fill(0);
      for (let j = first; j <= pos; j++) {
        const e = Math.exp(scores[j] - maxScore);
        sumExp += e;
        const slot = blockTables[tableBase + Math.floor(j / blockSize)] * blockSize + (j % blockSize);
        const vBase = slot * kvDim + kvHeadOffset;
        for (let d = 0; d < headDim; d++) acc[d] += e * vCache[vBase + d];
      }
      for (let d = 0; d < headDim; d++) out[qBase + d] = acc[d] / sumExp;
    }
  }
}

/**
 * SwiGLU: out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)).
 * gate, up, out [numTokens, intermediateSize] (out may alias gate).
 */
export function swiglu(gate: Float32Array, up: Float32Array, n: number, out: Float32Array): void {
  for (let i = 0; i < n; i++) {
    const g = gate[i];
    out[i] = (g / (1 + Math.exp(-g))) * up[i];
  }
}

/** sqrt(2 / pi), the tanh GELU's constant. */
const GELU_SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** The tanh approximation of GELU (PyTorch's gelu(approximate='tanh'), HF's gelu_pytorch_tanh). */
export function geluTanh(g: number): number {
  return 0.5 * g * (1 + Math.tanh(GELU_SQRT_2_OVER_PI * (g + 0.044715 * g * g * g)));
}

/**
 * GeGLU: out[i] = geluTanh(gate[i]) * up[i] (gemma's MLP).
 * gate, up, out [numTokens, intermediateSize] (out may alias gate).
 */
export function geglu(gate: Float32Array, up: Float32Array, n: number, out: Float32Array): void {
  for (let i = 0; i < n; i++) out[i] = geluTanh(gate[i]) * up[i];
}

/** Soft-capping in place: x[i] = cap * tanh(x[i] / cap) (gemma2's final logits). x [n]. */
export function logitSoftcap(x: Float32Array, cap: number): void {
  for (let i = 0; i < x.length; i++) x[i] = cap * Math.tanh(x[i] / cap);
}

/**
 * Residual add of two [numElements] f32 vectors: out[i] = a[i] + b[i] (out may alias a). The
 * twin of matmul.wgsl's ACCUMULATE store (x += o_proj(attn), x += down_proj(act)); the f64 sum
 * of two f32 values rounds to the same f32 as an f32 add, so it matches bit for bit (denormals
 * aside: GPUs may flush them).
 */
export function residualAdd(a: Float32Array, b: Float32Array, out: Float32Array = new Float32Array(a.length)): Float32Array {
  if (b.length !== a.length || out.length < a.length) {
    throw new Error(`residualAdd: lengths a=${a.length} b=${b.length} out=${out.length}`);
  }
  for (let i = 0; i < a.length; i++) out[i] = a[i]! + b[i]!;
  return out;
}
