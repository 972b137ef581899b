// Uploads a ModelDesc's tensors to GPU buffers: matrices in their stored encoding (the matmul and
// embedding kernels decode in place), vectors (norms, biases) widened to f32. Not a loader.
import type { DType, ModelConfig, ModelDesc, TensorDesc } from '../model/desc';
import { bf16ToF32, f16ToF32 } from '../model/half';
import { rowBytes, tensorBytes } from '../model/quant-layout';
import { repackForGpu } from './repack';

export interface GpuMatrix {
  buffer: GPUBuffer;
  dtype: DType;
  /** HF [out, in]: rows = outputs, cols = inputs */
  rows: number;
  cols: number;
}

/** Which of q, k, v a projection part computes, in row order. */
export type QkvOutput = 'q' | 'k' | 'v';

/**
 * Consecutive projections of q_proj, k_proj, v_proj stored in one dtype, multiplied as one
 * matrix whose store splits the rows (matmul.wgsl): all three in one part unless a quantized
 * file mixes dtypes (e.g. Q4_K_M's q6_K v_proj), which costs a dispatch per extra part.
 */
export interface QkvPart {
  outputs: QkvOutput[];
  matrix: GpuMatrix; // [sum of the outputs' dims, hidden]
  bias: GPUBuffer | null; // [rows] f32 (qwen2)
}

/** The MLP's gate and up: interleaved for matmul.wgsl's GLU store, or apart (mixed dtypes) with a swiglu dispatch. */
export type GpuGateUp = { kind: 'glu'; gateUp: GpuMatrix } | { kind: 'separate'; gate: GpuMatrix; up: GpuMatrix };

export interface GpuLayerWeights {
  inputNorm: GPUBuffer; // [hidden] f32
  qkv: QkvPart[];
  qNorm: GPUBuffer | null; // [headDim] f32 (qwen3)
  kNorm: GPUBuffer | null; // [headDim] f32 (qwen3)
  o: GpuMatrix; // [hidden, numHeads * headDim]
  /** [hidden] f32: llama's post_attention_layernorm, gemma's pre_feedforward_layernorm */
  mlpInputNorm: GPUBuffer;
  /** [hidden] f32: gemma's norm of the attention output before its residual add (its post_attention_layernorm), or null */
  attnOutputNorm: GPUBuffer | null;
  /** [hidden] f32: gemma's norm of the MLP output before its residual add (post_feedforward_layernorm), or null */
  mlpOutputNorm: GPUBuffer | null;
  /** glu: [2 * intermediate, hidden], rows gate_0, up_0, gate_1, ...; separate: each [intermediate, hidden] */
  mlp: GpuGateUp;
  down: GpuMatrix; // [hidden, intermediate]
}

export interface GpuWeights {
  embed: GpuMatrix; // [vocab, hidden]
  layers: GpuLayerWeights[];
  finalNorm: GPUBuffer; // [hidden] f32
  lmHead: GpuMatrix; // [vocab, hidden]; the embed buffer itself when tied (one copy of a large vocabulary)
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
  /** The checked tensor of a [rows, cols] matrix. */
  const matrixTensor = (name: string, rows: number, cols: number): TensorDesc => {
    const t = need(name);
    if (t.shape.length !== 2 || t.shape[0] !== rows || t.shape[1] !== cols) {
      throw new Error(`${model.source}: ${name} has shape [${t.shape.join(', ')}], expected [${rows}, ${cols}]`);
    }
    if (cols % MATMUL_COL_MULTIPLE[t.dtype] !== 0) throw new Error(`${name}: ${t.dtype} matmul needs cols % ${MATMUL_COL_MULTIPLE[t.dtype]} == 0, got ${cols}`);
    if (t.data.byteLength < tensorBytes(t.dtype, t.shape)) throw new Error(`${name}: ${t.data.byteLength} bytes is short for its shape`);
    return t;
  };
  const matrix = (name: string, rows: number, cols: number): GpuMatrix => {
    const t = matrixTensor(name, rows, cols);
    return { buffer: upload(name, repackForGpu(t.data.subarray(0, tensorBytes(t.dtype, t.shape)), t.dtype, rows, cols)), dtype: t.dtype, rows, cols };
  };
  /**
   * Several [rows_i, cols] matrices of one dtype as one: whole rows in order (`interleave`: row j of
   * each in turn). Rows are independent in every stored encoding, so the bytes are just moved.
   */
  const fused = (label: string, tensors: TensorDesc[], interleave = false): GpuMatrix => {
    const [first] = tensors;
    const dtype = first!.dtype;
    const cols = first!.shape[1]!;
    if (tensors.some((t) => t.dtype !== dtype)) throw new Error(`${label}: fused matrices must share one dtype`);
    const stride = rowBytes(dtype, cols);
    const rows = tensors.reduce((n, t) => n + t.shape[0]!, 0);
    const data = new Uint8Array(rows * stride);
    if (interleave) {
      for (let j = 0; j < first!.shape[0]!; j++) tensors.forEach((t, i) => data.set(t.data.subarray(j * stride, (j + 1) * stride), (j * tensors.length + i) * stride));
    } else {
      let at = 0;
      for (const t of tensors) {
        data.set(t.data.subarray(0, t.shape[0]! * stride), at);
        at += t.shape[0]! * stride;
      }
    }
    return { buffer: upload(label, repackForGpu(data, dtype, rows, cols)), dtype, rows, cols };
  };
  const vectorValues = (name: string, n: number): Float32Array => {
    const values = vectorToF32(need(name));
    if (values.length !== n) throw new Error(`${model.source}: ${name} has ${values.length} elements, expected ${n}`);
    return values;
  };
  const vector = (name: string, n: number): GPUBuffer => upload(name, new Uint8Array(vectorValues(name, n).buffer));

  const qDim = c.numHeads * c.headDim;
  const kvDim = c.numKvHeads * c.headDim;
  const dims: Record<QkvOutput, number> = { q: qDim, k: kvDim, v: kvDim };
  /** q, k, v projections grouped into runs of one dtype, each run one matrix (and one bias). */
  const qkvParts = (attn: string): QkvPart[] => {
    const outputs: QkvOutput[] = ['q', 'k', 'v'];
    const tensors = outputs.map((o) => matrixTensor(`${attn}${o}_proj.weight`, dims[o], c.hiddenSize));
    // biases: all three or none (a model may carry them without saying attention_bias)
    const hasBias = c.attentionBias || outputs.some((o) => model.tensors.has(`${attn}${o}_proj.bias`));
    const parts: QkvPart[] = [];
    for (let i = 0; i < 3; ) {
      let j = i + 1;
      while (j < 3 && tensors[j]!.dtype === tensors[i]!.dtype) j++;
      const run = outputs.slice(i, j);
      const label = `${attn}${run.join('')}_proj`;
      const matrix = fused(`${label}.weight`, tensors.slice(i, j));
      let bias: GPUBuffer | null = null;
      if (hasBias) {
        const values = new Float32Array(matrix.rows);
        let at = 0;
        for (const o of run) {
          values.set(vectorValues(`${attn}${o}_proj.bias`, dims[o]), at);
          at += dims[o];
        }
        bias = upload(`${label}.bias`, new Uint8Array(values.buffer));
      }
      parts.push({ outputs: run, matrix, bias });
      i = j;
    }
    return parts;
  };
  const gateUp = (mlp: string): GpuGateUp => {
    const gate = matrixTensor(`${mlp}gate_proj.weight`, c.intermediateSize, c.hiddenSize);
    const up = matrixTensor(`${mlp}up_proj.weight`, c.intermediateSize, c.hiddenSize);
    if (gate.dtype === up.dtype) return { kind: 'glu', gateUp: fused(`${mlp}gate_up_proj.weight`, [gate, up], true) };
    return { kind: 'separate', gate: matrix(gate.name, c.intermediateSize, c.hiddenSize), up: matrix(up.name, c.intermediateSize, c.hiddenSize) };
  };
  const layers: GpuLayerWeights[] = [];
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    const attn = `${p}self_attn.`;
    layers.push({
      inputNorm: vector(`${p}input_layernorm.weight`, c.hiddenSize),
      qkv: qkvParts(attn),
      qNorm: c.qkNorm ? vector(`${attn}q_norm.weight`, c.headDim) : null,
      kNorm: c.qkNorm ? vector(`${attn}k_norm.weight`, c.headDim) : null,
      o: matrix(`${attn}o_proj.weight`, c.hiddenSize, qDim),
      // gemma's post_attention_layernorm norms the attention output; llama's is the MLP's input norm
      mlpInputNorm: vector(`${p}${c.postNorms ? 'pre_feedforward_layernorm' : 'post_attention_layernorm'}.weight`, c.hiddenSize),
      attnOutputNorm: c.postNorms ? vector(`${p}post_attention_layernorm.weight`, c.hiddenSize) : null,
      mlpOutputNorm: c.postNorms ? vector(`${p}post_feedforward_layernorm.weight`, c.hiddenSize) : null,
      mlp: gateUp(`${p}mlp.`),
      down: matrix(`${p}mlp.down_proj.weight`, c.hiddenSize, c.intermediateSize),
    });
  }
  const embed = matrix('model.embed_tokens.weight', c.vocabSize, c.hiddenSize);
  const embedTensor = need('model.embed_tokens.weight');
  const lmHeadTensor = model.tensors.get('lm_head.weight');
  let lmHead: GpuMatrix;
  // an lm_head that is the embedding's own bytes (a loader that lists tied weights twice) binds the
  // embedding's buffer rather than a second copy
  if (lmHeadTensor && !sameBytes(lmHeadTensor, embedTensor)) lmHead = matrix('lm_head.weight', c.vocabSize, c.hiddenSize);
  else if (lmHeadTensor || c.tieWordEmbeddings) lmHead = embed;
  else throw new Error(`${model.source}: missing lm_head.weight and embeddings are not tied`);
  return { embed, layers, finalNorm: vector('model.norm.weight', c.hiddenSize), lmHead, bytes };
}

/** Whether a and b are the same stored tensor: one dtype and shape over the same bytes of one buffer. */
function sameBytes(a: TensorDesc, b: TensorDesc): boolean {
  return (
    a.dtype === b.dtype &&
    a.shape.join() === b.shape.join() &&
    a.data.buffer === b.data.buffer &&
    a.data.byteOffset === b.data.byteOffset &&
    a.data.byteLength === b.data.byteLength
  );
}

/** Frees every buffer of w (the tied lm_head only once). */
export function destroyWeights(w: GpuWeights): void {
  const buffers = new Set<GPUBuffer>([w.embed.buffer, w.lmHead.buffer, w.finalNorm]);
  for (const layer of w.layers) {
    for (const b of [layer.inputNorm, layer.qNorm, layer.kNorm, layer.o.buffer, layer.mlpInputNorm, layer.attnOutputNorm, layer.mlpOutputNorm, layer.down.buffer]) if (b) buffers.add(b);
    for (const part of layer.qkv) {
      buffers.add(part.matrix.buffer);
      if (part.bias) buffers.add(part.bias);
    }
    if (layer.mlp.kind === 'glu') buffers.add(layer.mlp.gateUp.buffer);
    else buffers.add(layer.mlp.gate.buffer).add(layer.mlp.up.buffer);
  }
  for (const buffer of buffers) buffer.destroy();
}
