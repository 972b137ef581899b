// The CPU runner's weights: every tensor of a ModelDesc dequantized once to f32, grouped per
// layer under the names forward.ts uses. Not a loader (src/model) and not the math (ops.ts).
import { dequantize } from './dequant';
import type { Matrix } from './ops';
import type { ModelConfig, ModelDesc, TensorDesc } from '../model/desc';
import { ropeInverseFrequencies } from '../model/rope';

/** M: the matrix type, Matrix unless a variant's matmuls need more of the stored tensor. */
export interface LayerWeights<M extends Matrix = Matrix> {
  /** [hidden] */
  inputNorm: Float32Array;
  /** [numHeads * headDim, hidden] */
  q: M;
  /** [numKvHeads * headDim, hidden] */
  k: M;
  /** [numKvHeads * headDim, hidden] */
  v: M;
  /** [numHeads * headDim] (qwen2) or null */
  qBias: Float32Array | null;
  /** [numKvHeads * headDim] (qwen2) or null */
  kBias: Float32Array | null;
  /** [numKvHeads * headDim] (qwen2) or null */
  vBias: Float32Array | null;
  /** [headDim] per-head RMSNorm weight on q (qwen3) or null */
  qNorm: Float32Array | null;
  /** [headDim] per-head RMSNorm weight on k (qwen3) or null */
  kNorm: Float32Array | null;
  /** [hidden, numHeads * headDim] */
  o: M;
  /** [hidden] the MLP's input norm (llama's post_attention_layernorm, gemma's pre_feedforward_layernorm) */
  mlpInputNorm: Float32Array;
  /** [hidden] gemma: the norm of the attention output before its residual add, or null */
  attnOutputNorm: Float32Array | null;
  /** [hidden] gemma: the norm of the MLP output before its residual add, or null */
  mlpOutputNorm: Float32Array | null;
  /** [headDim / 2] this layer's RoPE inverse frequencies (src/model/rope.ts; layers that agree share one array) */
  ropeInvFreq: Float32Array;
  /** [intermediate, hidden] */
  gate: M;
  /** [intermediate, hidden] */
  up: M;
  /** [hidden, intermediate] */
  down: M;
}

export interface CpuWeights<M extends Matrix = Matrix> {
  config: ModelConfig;
  /** [vocab, hidden] */
  embed: M;
  layers: LayerWeights<M>[];
  /** [hidden] */
  finalNorm: Float32Array;
  /** [vocab, hidden]; the same object as embed when embeddings are tied */
  lmHead: M;
}

/**
 * Dequantize every weight of `model` to f32 and check each shape against its config.
 * `toMatrix` lets a sibling forward keep more of each stored tensor beside its f32 values.
 */
export function loadCpuWeights(model: ModelDesc): CpuWeights;
export function loadCpuWeights<M extends Matrix>(model: ModelDesc, toMatrix: (m: Matrix, stored: TensorDesc) => M): CpuWeights<M>;
export function loadCpuWeights(model: ModelDesc, toMatrix: (m: Matrix, stored: TensorDesc) => Matrix = (m) => m): CpuWeights {
  const c = model.config;
  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  if (c.headDim % 2 !== 0) throw new Error(`headDim ${c.headDim} must be even for RoPE`);
  if (c.numHeads % c.numKvHeads !== 0) throw new Error(`numHeads ${c.numHeads} not a multiple of numKvHeads ${c.numKvHeads}`);

  const find = (name: string): TensorDesc | undefined => model.tensors.get(name);
  const need = (name: string): TensorDesc => {
    const t = find(name);
    if (!t) throw new Error(`${model.source}: missing tensor ${name}`);
    return t;
  };
  const matrix = (name: string, rows: number, cols: number): Matrix => {
    const t = need(name);
    if (t.shape.length !== 2 || t.shape[0] !== rows || t.shape[1] !== cols) {
      throw new Error(`${model.source}: ${name} has shape [${t.shape.join(', ')}], expected [${rows}, ${cols}]`);
    }
    return toMatrix({ rows, cols, data: dequantize(t) }, t);
  };
  const vector = (name: string, n: number): Float32Array => {
    const t = need(name);
    const size = t.shape.reduce((a, b) => a * b, 1);
    if (size !== n) throw new Error(`${model.source}: ${name} has ${size} elements, expected ${n}`);
    return dequantize(t);
  };
  const optionalVector = (name: string, n: number, wanted: boolean): Float32Array | null =>
    wanted || find(name) ? vector(name, n) : null;

  const layers: LayerWeights[] = [];
  const ropeTables = new Map<string, Float32Array>();
  const ropeFor = (layer: number): Float32Array => {
    const invFreq = ropeInverseFrequencies(c, layer);
    const key = invFreq.join();
    if (!ropeTables.has(key)) ropeTables.set(key, invFreq);
    return ropeTables.get(key)!;
  };
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}.`;
    layers.push({
      inputNorm: vector(`${p}input_layernorm.weight`, c.hiddenSize),
      q: matrix(`${p}self_attn.q_proj.weight`, qDim, c.hiddenSize),
      k: matrix(`${p}self_attn.k_proj.weight`, kvDim, c.hiddenSize),
      v: matrix(`${p}self_attn.v_proj.weight`, kvDim, c.hiddenSize),
      qBias: optionalVector(`${p}self_attn.q_proj.bias`, qDim, c.attentionBias),
      kBias: optionalVector(`${p}self_attn.k_proj.bias`, kvDim, c.attentionBias),
      vBias: optionalVector(`${p}self_attn.v_proj.bias`, kvDim, c.attentionBias),
      qNorm: c.qkNorm ? vector(`${p}self_attn.q_norm.weight`, c.headDim) : null,
      kNorm: c.qkNorm ? vector(`${p}self_attn.k_norm.weight`, c.headDim) : null,
      o: matrix(`${p}self_attn.o_proj.weight`, c.hiddenSize, qDim),
      mlpInputNorm: vector(`${p}${c.postNorms ? 'pre_feedforward_layernorm' : 'post_attention_layernorm'}.weight`, c.hiddenSize),
      attnOutputNorm: c.postNorms ? vector(`${p}post_attention_layernorm.weight`, c.hiddenSize) : null,
      mlpOutputNorm: c.postNorms ? vector(`${p}post_feedforward_layernorm.weight`, c.hiddenSize) : null,
      ropeInvFreq: ropeFor(i),
      gate: matrix(`${p}mlp.gate_proj.weight`, c.intermediateSize, c.hiddenSize),
      up: matrix(`${p}mlp.up_proj.weight`, c.intermediateSize, c.hiddenSize),
      down: matrix(`${p}mlp.down_proj.weight`, c.hiddenSize, c.intermediateSize),
    });
  }

  const embed = matrix('model.embed_tokens.weight', c.vocabSize, c.hiddenSize);
  let lmHead: Matrix;
  if (find('lm_head.weight')) lmHead = matrix('lm_head.weight', c.vocabSize, c.hiddenSize);
  else if (c.tieWordEmbeddings) lmHead = embed;
  else throw new Error(`${model.source}: missing lm_head.weight and embeddings are not tied`);

  return {
    config: c,
    embed,
    layers,
    finalNorm: vector('model.norm.weight', c.hiddenSize),
    lmHead,
  };
}
