// The in-memory model description every loader produces and every runner consumes:
// config plus tensors kept in their stored encoding. Not a loader, not math.

export type Arch = 'llama' | 'qwen2' | 'qwen3' | 'gemma2' | 'gemma3';
export type DType = 'f32' | 'f16' | 'bf16' | 'q8_0' | 'q4_0' | 'q4_K' | 'q6_K';

export type RopeScaling = Llama3RopeScaling | LinearRopeScaling;

export interface Llama3RopeScaling {
  /** Llama-3 style frequency scaling. */
  type: 'llama3';
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
}

/** Positions divided by factor (every frequency over factor): gemma3's global layers. */
export interface LinearRopeScaling {
  type: 'linear';
  factor: number;
}

/** The MLP's gate activation: SwiGLU (silu) or GeGLU with tanh-approximated GELU (gemma). */
export type MlpActivation = 'silu' | 'gelu_tanh';

export interface ModelConfig {
  arch: Arch;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling: RopeScaling | null;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** qwen2: q/k/v projections carry a bias. */
  attentionBias: boolean;
  /** qwen3, gemma3: per-head RMSNorm on q and k before RoPE. */
  qkNorm: boolean;
  /** Multiplier of the embedding rows on the way in: gemma's sqrt(hidden), 1 elsewhere. */
  embedScale: number;
  mlpActivation: MlpActivation;
  /**
   * gemma2/3: an RMSNorm on the attention output and on the MLP output before each residual add
   * (tensors post_attention_layernorm, post_feedforward_layernorm; the MLP's input norm is then
   * pre_feedforward_layernorm).
   */
  postNorms: boolean;
  /** Multiplier of every q . k: 1 / sqrt(headDim), gemma's 1 / sqrt(query_pre_attn_scalar). */
  attentionScale: number;
  /** gemma2: attention scores become cap * tanh(s / cap) before the softmax; 0 = none. */
  attnLogitSoftcap: number;
  /** gemma2: logits become cap * tanh(l / cap); 0 = none. */
  finalLogitSoftcap: number;
  /**
   * [numLayers] each layer's attention window: a query at position p sees keys p - W + 1 .. p
   * (llama.cpp's and HF's sliding window W); 0 = every earlier position.
   */
  layerWindows: number[];
  /**
   * RoPE base of the sliding-window layers, unscaled (gemma3's rope_local_base_freq); null: every
   * layer uses ropeTheta and ropeScaling.
   */
  slidingRopeTheta: number | null;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

/**
 * One weight in its stored encoding. Names are Hugging Face names for every format
 * (GGUF names are mapped, llama GGUF Q/K rows un-permuted back to HF's rotary layout).
 * shape is [rows, cols] for matrices (HF's [out, in]), cols contiguous; [n] for vectors.
 * Quantized rows are whole blocks (cols is a multiple of the block's element count).
 */
export interface TensorDesc {
  name: string;
  dtype: DType;
  shape: number[];
  data: Uint8Array;
}

export interface ModelDesc {
  config: ModelConfig;
  tensors: Map<string, TensorDesc>;
  /** Where it came from, for messages: a file name, folder or URL. */
  source: string;
}
