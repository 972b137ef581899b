// The in-memory model description every loader produces and every runner consumes:
// config plus tensors kept in their stored encoding. Not a loader, not math.

export type Arch = 'llama' | 'qwen2' | 'qwen3';
export type DType = 'f32' | 'f16' | 'bf16' | 'q8_0' | 'q4_0' | 'q4_K' | 'q6_K';

export interface RopeScaling {
  /** Llama-3 style frequency scaling. */
  type: 'llama3';
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
}

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
  /** qwen3: per-head RMSNorm on q and k before RoPE. */
  qkNorm: boolean;
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
