// Uploads a ModelDesc's tensors to GPU buffers: matrices in their stored encoding (the matmul and
// embedding kernels decode in place), vectors (norms, biases) widened to f32. Not a loader.
import type { DType, ModelConfig, ModelDesc, TensorDesc } from '../model/desc';
import { bf16ToF32, f16ToF32 } from '../model/half';
import { tensorBytes } from '../model/quant-layout';

export interface GpuMatrix {
  buffer: GPUBuffer;
  dtype: DType;
  /** HF [out, in]: rows = outputs, cols = inputs */
  rows: number;
  cols: number;
}

export interface GpuLayerWeights {
  inputNorm: GPUBuffer; // [hidden] f32
  q: GpuMatrix; // [numHeads * headDim, hidden]
  k: GpuMatrix; // [numKvHeads * headDim, hidden]
  v: GpuMatrix; // [numKvHeads * headDim, hidden]
  qBias: GPUBuffer | null; // [numHeads * headDim] f32 (qwen2)
  kBias: GPUBuffer | null; // [numKvHeads * headDim] f32 (qwen2)
  vBias: GPUBuffer | null; // [numKvHeads * headDim] f32 (qwen2)
  qNorm: GPUBuffer | null; // [headDim] f32 (qwen3)
  kNorm: GPUBuffer | null; // [headDim] f32 (qwen3)
  o: GpuMatrix; // [hidden, numHeads * headDim]
  postNorm: GPUBuffer; // [hidden] f32
  gate: GpuMatrix; // [intermediate, hidden]
  up: GpuMatrix; // [intermediate, hidden]
  down: GpuMatrix; // [hidden, intermediate]
}

export interface GpuWeights {
  embed: GpuMatrix; // [vocab, hidden]
  layers: GpuLayerWeights[];
  finalNorm: GPUBuffer; // [hidden] f32
  lmHead: GpuMatrix; // [vocab, hidden]; the embed buffer itself when tied
  bytes: number;
}

/** Column multiples the matmul kernels need per dtype (vec4 reads, or whole quant blocks). */
const MATMUL_COL_MULTIPLE: Record<DType, number> = { f32: 4, f16: 4, bf16: 4, q8_0: 32, q4_0: 32, q4_K: 256, q6_K: 256 };

function vectorToF32(t: TensorDesc): Float32Array {
  const n = t.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  const view = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  for (let i = 0; i < n; i++) {
    if (t.dtype === 'f32') out[i] = view.getFloat32(4 * i, true);
    else if (t.dtype === 'f16') out[i] = f16ToF32(view.getUint16(2 * i, true));
    else if (t.dtype === 'bf16') out[i] = bf16ToF32(view.getUint16(2 * i, true));
    else throw new Error(`${t.name}: vectors stored as ${t.dtype} are not supported`);
  }
  return out;
}

export function uploadWeights(device: GPUDevice, model: ModelDesc): GpuWeights {
  const c: ModelConfig = model.config;
  const maxBinding = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  let bytes = 0;
  const need = (name: string): TensorDesc => {
    const t = model.tensors.get(name);
    if (!t) throw new Error(`${model.source}: missing tensor ${name}`);
    return t;
  };
  const upload = (name: string, data: Uint8Array): GPUBuffer => {
    // Padded to 16 bytes: kernels read whole u32 words, and a 2-byte-aligned q-block read may
    // touch the word after the tensor's last byte.
    const size = Math.ceil((data.byteLength + 4) / 16) * 16;
    if (size > maxBinding) {
      throw new Error(`${name} needs a ${size}-byte GPU buffer; this device binds at most ${maxBinding} bytes`);
    }
    const buffer = device.createBuffer({ label: name, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, mappedAtCreation: true });
    new Uint8Array(buffer.getMappedRange()).set(data);
    buffer.unmap();
    bytes += size;
    return buffer;
  };
  const matrix = (name: string, rows: number, cols: number): GpuMatrix => {
    const t = need(name);
    if (t.shape.length !== 2 || t.shape[0] !== rows || t.shape[1] !== cols) {
      throw new Error(`${model.source}: ${name} has shape [${t.shape.join(', ')}], expected [${rows}, ${cols}]`);
    }
    if (cols % MATMUL_COL_MULTIPLE[t.dtype] !== 0) throw new Error(`${name}: ${t.dtype} matmul needs cols % ${MATMUL_COL_MULTIPLE[t.dtype]} == 0, got ${cols}`);
    if (t.data.byteLength < tensorBytes(t.dtype, t.shape)) throw new Error(`${name}: ${t.data.byteLength} bytes is short for its shape`);
    return { buffer: upload(name, t.data), dtype: t.dtype, rows, cols };
  };
  const vector = (name: string, n: number): GPUBuffer => {
    const values = vectorToF32(need(name));
    if (values.length !== n) throw new Error(`${model.source}: ${name} has ${values.length} elements, expected ${n}`);
    return upload(name, new Uint8Array(values.buffer));
  };
  const optionalVector = (name: string, n: number): GPUBuffer | null => (model.tensors.has(name) ? vector(name, n) : null);

  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  const layers: GpuLayerWeights[] = [];
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    layers.push({
      inputNorm: vector(`${p}input_layernorm.weight`, c.hiddenSize),
      q: matrix(`${p}self_attn.q_proj.weight`, qDim, c.hiddenSize),
      k: matrix(`${p}self_attn.k_proj.weight`, kvDim, c.hiddenSize),
      v: matrix(`${p}self_attn.v_proj.weight`, kvDim, c.hiddenSize),
      qBias: c.attentionBias ? vector(`${p}self_attn.q_proj.bias`, qDim) : optionalVector(`${p}self_attn.q_proj.bias`, qDim),
      kBias: c.attentionBias ? vector(`${p}self_attn.k_proj.bias`, kvDim) : optionalVector(`${p}self_attn.k_proj.bias`, kvDim),
      vBias: c.attentionBias ? vector(`${p}self_attn.v_proj.bias`, kvDim) : optionalVector(`${p}self_attn.v_proj.bias`, kvDim),
      qNorm: c.qkNorm ? vector(`${p}self_attn.q_norm.weight`, c.headDim) : null,
      kNorm: c.qkNorm ? vector(`${p}self_attn.k_norm.weight`, c.headDim) : null,
      o: matrix(`${p}self_attn.o_proj.weight`, c.hiddenSize, qDim),
      postNorm: vector(`${p}post_attention_layernorm.weight`, c.hiddenSize),
      gate: matrix(`${p}mlp.gate_proj.weight`, c.intermediateSize, c.hiddenSize),
      up: matrix(`${p}mlp.up_proj.weight`, c.intermediateSize, c.hiddenSize),
      down: matrix(`${p}mlp.down_proj.weight`, c.hiddenSize, c.intermediateSize),
    });
  }
  const embed = matrix('model.embed_tokens.weight', c.vocabSize, c.hiddenSize);
  let lmHead: GpuMatrix;
  if (model.tensors.has('lm_head.weight')) lmHead = matrix('lm_head.weight', c.vocabSize, c.hiddenSize);
  else if (c.tieWordEmbeddings) lmHead = embed;
  else throw new Error(`${model.source}: missing lm_head.weight and embeddings are not tied`);
  return { embed, layers, finalNorm: vector('model.norm.weight', c.hiddenSize), lmHead, bytes };
}

/** Frees every buffer of w (the tied lm_head only once). */
export function destroyWeights(w: GpuWeights): void {
  const buffers = new Set<GPUBuffer>([w.embed.buffer, w.lmHead.buffer, w.finalNorm]);
  for (const layer of w.layers) {
    for (const value of Object.values(layer) as Array<GpuMatrix | GPUBuffer | null>) {
      if (value) buffers.add('buffer' in value && 'dtype' in value ? value.buffer : (value as GPUBuffer));
    }
  }
  for (const buffer of buffers) buffer.destroy();
}
