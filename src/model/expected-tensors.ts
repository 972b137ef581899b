// The tensors (HF names and shapes) a config implies, and the check that a loaded set matches.
// Not loading: loaders call checkTensors after mapping names. Extra tensors are dropped.
import type { ModelConfig, TensorDesc } from './desc';
import { ModelFormatError } from './errors';
import { BLOCK_LAYOUTS } from './quant-layout';

export function expectedTensorShapes(c: ModelConfig): Map<string, number[]> {
  const m = new Map<string, number[]>();
  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  m.set('model.embed_tokens.weight', [c.vocabSize, c.hiddenSize]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}.`;
    m.set(`${p}input_layernorm.weight`, [c.hiddenSize]);
    m.set(`${p}self_attn.q_proj.weight`, [qDim, c.hiddenSize]);
    m.set(`${p}self_attn.k_proj.weight`, [kvDim, c.hiddenSize]);
    m.set(`${p}self_attn.v_proj.weight`, [kvDim, c.hiddenSize]);
    m.set(`${p}self_attn.o_proj.weight`, [c.hiddenSize, qDim]);
    if (c.attentionBias) {
      m.set(`${p}self_attn.q_proj.bias`, [qDim]);
      m.set(`${p}self_attn.k_proj.bias`, [kvDim]);
      m.set(`${p}self_attn.v_proj.bias`, [kvDim]);
    }
    if (c.qkNorm) {
      m.set(`${p}self_attn.q_norm.weight`, [c.headDim]);
      m.set(`${p}self_attn.k_norm.weight`, [c.headDim]);
    }
    // llama's post_attention_layernorm is the MLP's input norm; gemma's normalizes the attention output
    m.set(`${p}post_attention_layernorm.weight`, [c.hiddenSize]);
    if (c.postNorms) {
      m.set(`${p}pre_feedforward_layernorm.weight`, [c.hiddenSize]);
      m.set(`${p}post_feedforward_layernorm.weight`, [c.hiddenSize]);
    }
    m.set(`${p}mlp.gate_proj.weight`, [c.intermediateSize, c.hiddenSize]);
    m.set(`${p}mlp.up_proj.weight`, [c.intermediateSize, c.hiddenSize]);
    m.set(`${p}mlp.down_proj.weight`, [c.hiddenSize, c.intermediateSize]);
  }
  m.set('model.norm.weight', [c.hiddenSize]);
  if (!c.tieWordEmbeddings) m.set('lm_head.weight', [c.vocabSize, c.hiddenSize]);
  return m;
}

/**
 * Keeps exactly the expected tensors, checking each exists with the right shape and that
 * vectors (norms, biases) are unquantized. Throws ModelFormatError naming `file`.
 */
export function checkTensors(file: string, c: ModelConfig, found: Map<string, TensorDesc>): Map<string, TensorDesc> {
  const out = new Map<string, TensorDesc>();
  for (const [name, shape] of expectedTensorShapes(c)) {
    const t = found.get(name);
    if (!t) throw new ModelFormatError(file, `missing tensor "${name}"`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new ModelFormatError(file, `tensor "${name}" has shape ${JSON.stringify(t.shape)} but the config implies ${JSON.stringify(shape)}`);
    }
    if (shape.length === 1 && BLOCK_LAYOUTS[t.dtype].blockElems !== 1) {
      throw new ModelFormatError(file, `tensor "${name}" is a vector stored as ${t.dtype}; vectors must be f32, f16 or bf16`);
    }
    out.set(name, t);
  }
  return out;
}
