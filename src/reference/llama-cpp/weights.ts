// The emulation's weights: the reference's f32 matrices (../weights.ts), each also carrying how
// llama.cpp rounds its input and whose f32 order it follows, and the op set of the emulation.
import type { ModelDesc, TensorDesc } from '../../model/desc';
import type { KvCacheType } from '../../engine/kv-types';
import { kvWrite, pagedAttention, rmsNorm, rope, swiglu, type Matrix } from '../ops';
import { loadCpuWeights, type CpuWeights } from '../weights';
import { llamaCppKvAttention, llamaCppKvWrite } from './kv-attention';
import { llamaCppKernel, type LlamaCppMatrix } from './matmul';
import { llamaCppAttention, llamaCppGeglu, llamaCppRmsNorm, llamaCppRope, llamaCppSwiglu } from './ops';
import { llamaCppRounding, type LlamaCppEmulation } from './rounding';

/** The non-matmul ops of llama.cpp's forward: its exact f32 orders ('x86-amx') or the reference's. */
export interface LlamaCppOps {
  rmsNorm: typeof rmsNorm;
  /** The MLP's activation: swiglu, or geglu (gemma; llama.cpp's f16-table GELU at every level). */
  glu: typeof swiglu;
  /** x [numTokens, numHeads, headDim] of layer `layer`, in place; positions [numTokens] */
  rope(x: Float32Array, numTokens: number, numHeads: number, positions: Int32Array, layer: number): void;
  attention: typeof pagedAttention;
  /** K/V into the cache, rounded to its type as llama.cpp's write does. */
  kvWrite: typeof kvWrite;
}

export interface LlamaCppWeights extends CpuWeights<LlamaCppMatrix> {
  emulation: LlamaCppEmulation;
  /** Chosen once here: the emulation is fixed when the weights load. */
  ops: LlamaCppOps;
}

/** The reference's matrix m of stored tensor t, as llama.cpp multiplies it under `emulation`. */
function llamaCppMatrix(m: Matrix, t: TensorDesc, emulation: LlamaCppEmulation): LlamaCppMatrix {
  const kernel = emulation === 'x86-amx' ? llamaCppKernel(t.dtype, m.rows, t.name) : null;
  return { ...m, rounding: llamaCppRounding(t.dtype), kernel, q4KBlocks: kernel && t.dtype === 'q4_K' ? t.data : null };
}

function llamaCppOps(weights: CpuWeights, emulation: LlamaCppEmulation, kvCacheType: KvCacheType): LlamaCppOps {
  const c = weights.config;
  const ownRope: LlamaCppOps['rope'] = (x, numTokens, numHeads, positions, layer) => rope(x, numTokens, numHeads, c.headDim, positions, weights.layers[layer]!.ropeInvFreq);
  // f16 and q8_0 caches: llama.cpp's roundings around the cache (kv-attention.ts), in the reference's orders
  const kvOps = kvCacheType === 'f32' ? null : { attention: llamaCppKvAttention(kvCacheType), kvWrite: llamaCppKvWrite };
  // gemma's GELU is a table lookup in llama.cpp, far from the exact function: emulated at both levels
  const geglu = c.mlpActivation === 'gelu_tanh' ? { glu: llamaCppGeglu } : null;
  // gemma's scoring (window, cap, scale) is not in llamaCppAttention: the reference's attention then
  const scored = c.postNorms || c.attentionScale !== 1 / Math.sqrt(c.headDim);
  if (scored && kvOps) throw new Error(`the llama.cpp emulation has no ${kvCacheType} KV cache for ${c.arch}'s attention`);
  if (emulation === 'rounding' || scored) return { rmsNorm, glu: swiglu, rope: ownRope, attention: pagedAttention, kvWrite, ...kvOps, ...geglu };
  return {
    kvWrite,
    rmsNorm: llamaCppRmsNorm,
    glu: llamaCppSwiglu,
    // Llama-3 frequency factors are not emulated: such models keep the reference's rope.
    rope: c.ropeScaling ? ownRope : (x, numTokens, numHeads, positions) => llamaCppRope(x, numTokens, numHeads, c.headDim, positions, c.ropeTheta),
    attention: (q, numTokens, kCache, vCache, layout, out) => llamaCppAttention(q, numTokens, kCache, vCache, { ...layout, interleavedQK: c.arch === 'llama' }, out),
    ...kvOps,
  };
}

/** Every weight of `model` as the reference loads it, plus what `emulation` (and a KV cache of `kvCacheType`) needs of llama.cpp. */
export function loadLlamaCppWeights(model: ModelDesc, emulation: LlamaCppEmulation, kvCacheType: KvCacheType): LlamaCppWeights {
  const weights = loadCpuWeights(model, (m, t) => llamaCppMatrix(m, t, emulation));
  return { ...weights, emulation, ops: llamaCppOps(weights, emulation, kvCacheType) };
}
