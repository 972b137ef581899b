// One step through llama.cpp's CPU graph (llama, qwen2, qwen3, gemma2, gemma3) with the emulated ops,
// for the oracle test. Not Cohort's forward (../forward.ts), whose step layout and buffers it reuses.
import type { StepPlan } from '../../engine/types';
import { beginStep, lastTokenStates, layerScoring, type ForwardArena, type ForwardOutput } from '../forward';
import type { KvPool } from '../kv-pool';
import { embeddingGather, logitSoftcap, residualAdd } from '../ops';
import type { LayerWeights } from '../weights';
import { matmulLikeLlamaCpp as mm, type LlamaCppMatrix } from './matmul';
import type { LlamaCppWeights } from './weights';

/**
 * The same transformer as ../forward.ts, each op in llama.cpp's f32 order (weights.ops, every
 * matrix's kernel). Where llama.cpp's graph differs in shape it is followed: after the last
 * layer's attention only the output tokens go on (ggml_get_rows on the output ids), so the last
 * FFN runs as one-token matmuls, which sum in another order than several-token ones.
 */
export function llamaCppForward(weights: LlamaCppWeights, kv: KvPool, plan: StepPlan, arena?: ForwardArena): ForwardOutput {
  const { config: c, ops } = weights;
  const hidden = c.hiddenSize;
  const kvDim = c.numKvHeads * c.headDim;
  const { numTokens: T, tokenIds, layout, slots, buffers } = beginStep(weights, kv, plan, arena);
  const { x, xNorm, q, k, v, attn, delta, gate, up } = buffers; // [T, ...] each, shapes on ForwardArena
  const norm = (vecs: Float32Array, weight: Float32Array, numVecs: number, dim: number, out: Float32Array): void =>
    ops.rmsNorm(vecs, weight, numVecs, dim, c.rmsNormEps, out);

  /** x += o_proj(attention(rope(q), rope(k), v)) over rms_norm(x), all T tokens of layer l. */
  const attentionBlock = (l: number): void => {
    const w = weights.layers[l];
    norm(x, w.inputNorm, T, hidden, xNorm);
    mm(xNorm, T, w.q, w.qBias, q);
    mm(xNorm, T, w.k, w.kBias, k);
    mm(xNorm, T, w.v, w.vBias, v);
    if (w.qNorm && w.kNorm) {
      norm(q, w.qNorm, T * c.numHeads, c.headDim, q);
      norm(k, w.kNorm, T * c.numKvHeads, c.headDim, k);
    }
    ops.rope(q, T, c.numHeads, layout.positions, l);
    ops.rope(k, T, c.numKvHeads, layout.positions, l);
    ops.kvWrite(k, v, slots, kvDim, kv.k[l], kv.v[l], kv.kvCacheType);
    ops.attention(q, T, kv.k[l], kv.v[l], layout, attn, layerScoring(c, l));
    mm(attn, T, w.o, null, delta);
    if (w.attnOutputNorm) norm(delta, w.attnOutputNorm, T, hidden, delta);
    residualAdd(x, delta, x);
  };

  /** xs [n, hidden] += down(glu(gate(h), up(h))) (gemma: rms_norm'd), h = rms_norm(xs), in place. */
  const ffnBlock = (w: LayerWeights<LlamaCppMatrix>, xs: Float32Array, n: number): void => {
    const h = xNorm.subarray(0, n * hidden);
    const g = gate.subarray(0, n * c.intermediateSize);
    const u = up.subarray(0, n * c.intermediateSize);
    const d = delta.subarray(0, n * hidden);
    norm(xs, w.mlpInputNorm, n, hidden, h);
    mm(h, n, w.gate, null, g);
    mm(h, n, w.up, null, u);
    ops.glu(g, u, g.length, g);
    mm(g, n, w.down, null, d);
    if (w.mlpOutputNorm) norm(d, w.mlpOutputNorm, n, hidden, d);
    residualAdd(xs, d, xs);
  };

  embeddingGather(weights.embed, tokenIds, x, c.embedScale);
  const last = c.numLayers - 1;
  for (let l = 0; l < last; l++) {
    attentionBlock(l);
    ffnBlock(weights.layers[l], x, T);
  }
  attentionBlock(last);

  // From here only each sampling row's last token, one at a time (the oracle's steps have one).
  const { sampleRows, states } = lastTokenStates(plan, x, hidden); // [numOut, hidden]
  const numOut = sampleRows.length;
  for (let i = 0; i < numOut; i++) ffnBlock(weights.layers[last], states.subarray(i * hidden, (i + 1) * hidden), 1);
  norm(states, weights.finalNorm, numOut, hidden, states);
  const logits = new Float32Array(numOut * c.vocabSize); // [numOut, vocab]
  mm(states, numOut, weights.lmHead, null, logits);
  if (c.finalLogitSoftcap > 0) logitSoftcap(logits, c.finalLogitSoftcap);
  return { sampleRows, logits };
}
