// A seeded random f32 ModelDesc of any supported architecture, for the reference tests.
// Not a trained model and not a file writer: tensors live in memory only.
import { fmix32 } from '../engine/rng';
import type { Arch, ModelConfig, ModelDesc, TensorDesc } from '../model/desc';

export interface RandomModelOptions {
  arch: Arch;
  vocabSize?: number;
  hiddenSize?: number;
  intermediateSize?: number;
  numLayers?: number;
  numHeads?: number;
  numKvHeads?: number;
  headDim?: number;
  tieWordEmbeddings?: boolean;
  ropeScaling?: ModelConfig['ropeScaling'];
  seed?: number;
}

/** Deterministic uniform floats in [-1, 1) from (seed, index). */
function randomValues(n: number, seed: number, scale: number): Float32Array {
  const out = new Float32Array(n); // [n]
  for (let i = 0; i < n; i++) out[i] = ((fmix32((seed ^ Math.imul(i, 0x9e3779b9)) >>> 0) / 2 ** 31) - 1) * scale;
  return out;
}

function f32Tensor(name: string, shape: number[], values: Float32Array): TensorDesc {
  return { name, dtype: 'f32', shape, data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) };
}

/** Default shapes are tiny (hidden 32, 2 layers); weights scaled ~1/sqrt(fan-in) so activations stay O(1). */
export function randomModel(options: RandomModelOptions): ModelDesc {
  const arch = options.arch;
  const config: ModelConfig = {
    arch,
    vocabSize: options.vocabSize ?? 61,
    hiddenSize: options.hiddenSize ?? 32,
    intermediateSize: options.intermediateSize ?? 48,
    numLayers: options.numLayers ?? 2,
    numHeads: options.numHeads ?? 4,
    numKvHeads: options.numKvHeads ?? 2,
    headDim: options.headDim ?? 8,
    rmsNormEps: 1e-5,
    ropeTheta: 10000,
    ropeScaling: options.ropeScaling ?? null,
    maxPositionEmbeddings: 4096,
    tieWordEmbeddings: options.tieWordEmbeddings ?? false,
    attentionBias: arch === 'qwen2',
    qkNorm: arch === 'qwen3',
    bosTokenId: null,
    eosTokenIds: [],
  };
  const c = config;
  const tensors = new Map<string, TensorDesc>();
  let seed = options.seed ?? 1;
  const add = (name: string, shape: number[], scale: number, offset = 0): void => {
    const values = randomValues(shape.reduce((a, b) => a * b, 1), seed++, scale);
    if (offset) for (let i = 0; i < values.length; i++) values[i] += offset;
    tensors.set(name, f32Tensor(name, shape, values));
  };
  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  add('model.embed_tokens.weight', [c.vocabSize, c.hiddenSize], 1);
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    add(`${p}input_layernorm.weight`, [c.hiddenSize], 0.2, 1);
    add(`${p}self_attn.q_proj.weight`, [qDim, c.hiddenSize], 2 / Math.sqrt(c.hiddenSize));
    add(`${p}self_attn.k_proj.weight`, [kvDim, c.hiddenSize], 2 / Math.sqrt(c.hiddenSize));
    add(`${p}self_attn.v_proj.weight`, [kvDim, c.hiddenSize], 1 / Math.sqrt(c.hiddenSize));
    if (c.attentionBias) {
      add(`${p}self_attn.q_proj.bias`, [qDim], 0.5);
      add(`${p}self_attn.k_proj.bias`, [kvDim], 0.5);
      add(`${p}self_attn.v_proj.bias`, [kvDim], 0.5);
    }
    if (c.qkNorm) {
      add(`${p}self_attn.q_norm.weight`, [c.headDim], 0.3, 1);
      add(`${p}self_attn.k_norm.weight`, [c.headDim], 0.3, 1);
    }
    add(`${p}self_attn.o_proj.weight`, [c.hiddenSize, qDim], 1 / Math.sqrt(qDim));
    add(`${p}post_attention_layernorm.weight`, [c.hiddenSize], 0.2, 1);
    add(`${p}mlp.gate_proj.weight`, [c.intermediateSize, c.hiddenSize], 1 / Math.sqrt(c.hiddenSize));
    add(`${p}mlp.up_proj.weight`, [c.intermediateSize, c.hiddenSize], 1 / Math.sqrt(c.hiddenSize));
    add(`${p}mlp.down_proj.weight`, [c.hiddenSize, c.intermediateSize], 1 / Math.sqrt(c.intermediateSize));
  }
  add('model.norm.weight', [c.hiddenSize], 0.2, 1);
  if (!c.tieWordEmbeddings) add('lm_head.weight', [c.vocabSize, c.hiddenSize], 4 / Math.sqrt(c.hiddenSize));
  return { config, tensors, source: `random ${arch} model` };
}
