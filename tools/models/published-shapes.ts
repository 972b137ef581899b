// Random-weight models with published shapes (SmolLM2-135M/360M, Qwen2.5-0.5B, Llama-3.2-1B, Gemma-3-270M/1B) written straight as
// quantized blocks (q8_0, q4_0, q4_K) for benchmarks: drawing 0.5B f32 values as the synthetic test models do would take minutes. Not for reading outputs.
import type { ModelConfig, ModelDesc, TensorDesc } from '../../src/model/desc';
import { expectedTensorShapes } from '../../src/model/expected-tensors';
import { configFromHf } from '../../src/model/hf-config';
import { tensorBytes } from '../../src/model/quant-layout';

/** Config shapes as published in each model's config.json (the keys that set a shape), read as a loader reads them. */
export const PUBLISHED_CONFIGS: Record<string, Record<string, unknown>> = {
  'SmolLM2-135M': {
    model_type: 'llama', vocab_size: 49152, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3,
    rms_norm_eps: 1e-5, rope_theta: 100000, max_position_embeddings: 8192, tie_word_embeddings: true, bos_token_id: 1, eos_token_id: 2,
  },
  'SmolLM2-360M': {
    model_type: 'llama', vocab_size: 49152, hidden_size: 960, intermediate_size: 2560, num_hidden_layers: 32, num_attention_heads: 15, num_key_value_heads: 5,
    rms_norm_eps: 1e-5, rope_theta: 100000, max_position_embeddings: 8192, tie_word_embeddings: true, bos_token_id: 1, eos_token_id: 2,
  },
  'Llama-3.2-1B': {
    model_type: 'llama', vocab_size: 128256, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16, num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64,
    rms_norm_eps: 1e-5, rope_theta: 500000, rope_scaling: { rope_type: 'llama3', factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    max_position_embeddings: 131072, tie_word_embeddings: true, bos_token_id: 128000, eos_token_id: [128001, 128008, 128009],
  },
  'Qwen2.5-0.5B': {
    model_type: 'qwen2', vocab_size: 151936, hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2,
    rms_norm_eps: 1e-6, rope_theta: 1000000, max_position_embeddings: 32768, tie_word_embeddings: true, eos_token_id: 151643,
  },
  'Gemma-3-270M': {
    model_type: 'gemma3_text', vocab_size: 262144, hidden_size: 640, intermediate_size: 2048, num_hidden_layers: 18, num_attention_heads: 4, num_key_value_heads: 1, head_dim: 256,
    rms_norm_eps: 1e-6, rope_theta: 1000000, rope_local_base_freq: 10000, rope_scaling: null, sliding_window: 512, sliding_window_pattern: 6, query_pre_attn_scalar: 256,
    max_position_embeddings: 32768, tie_word_embeddings: true, bos_token_id: 2, eos_token_id: [1, 106], hidden_activation: 'gelu_pytorch_tanh',
  },
  'Gemma-3-1B': {
    model_type: 'gemma3_text', vocab_size: 262144, hidden_size: 1152, intermediate_size: 6912, num_hidden_layers: 26, num_attention_heads: 4, num_key_value_heads: 1, head_dim: 256,
    rms_norm_eps: 1e-6, rope_theta: 1000000, rope_local_base_freq: 10000, rope_scaling: null, sliding_window: 512, sliding_window_pattern: 6, query_pre_attn_scalar: 256,
    max_position_embeddings: 32768, tie_word_embeddings: true, bos_token_id: 2, eos_token_id: [1, 106], hidden_activation: 'gelu_pytorch_tanh',
  },
};

export const MODEL_SHAPES: Record<string, ModelConfig> = Object.fromEntries(
  Object.entries(PUBLISHED_CONFIGS).map(([name, raw]) => [name, configFromHf(`${name} config.json`, raw)]),
);

/** xorshift32 bytes: fast and deterministic, no need for statistical quality. */
export function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  const words = new Uint32Array(out.buffer, 0, n >>> 2);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return out;
}

/** The stored types a random matrix can be drawn in. */
export type RandomMatrixType = 'q8_0' | 'q4_0' | 'q4_K';

/** Block scale (f16 at each block's start for q8_0/q4_0): 2^-10 keeps activations finite. */
const F16_SCALE = 0x1400;
/**
 * q4_K's super-block d and dmin (f16 2^-14, the smallest normal): its 6-bit sub-scales (up to 63)
 * times 4-bit codes reach 945 * d, so a scale near q4_0's would overflow a deep stack.
 */
const F16_Q4K_SCALE = 0x0400;
/** Bytes per block and how many f16 scales open it (q4_K: d then dmin). */
const RANDOM_BLOCKS: Record<RandomMatrixType, { bytes: number; scales: number; scale: number }> = {
  q8_0: { bytes: 34, scales: 1, scale: F16_SCALE },
  q4_0: { bytes: 18, scales: 1, scale: F16_SCALE },
  q4_K: { bytes: 144, scales: 2, scale: F16_Q4K_SCALE },
};

/** A matrix of random blocks in `dtype` (codes and sub-scales random, block scales fixed). */
export function randomMatrix(name: string, shape: number[], dtype: RandomMatrixType, seed: number): TensorDesc {
  const data = randomBytes(tensorBytes(dtype, shape), seed);
  const { bytes, scales, scale } = RANDOM_BLOCKS[dtype];
  for (let at = 0; at < data.length; at += bytes) {
    for (let s = 0; s < scales; s++) {
      data[at + 2 * s] = scale & 0xff;
      data[at + 2 * s + 1] = scale >> 8;
    }
  }
  return { name, dtype, shape, data };
}

function constantVector(name: string, length: number, value: number): TensorDesc {
  return { name, dtype: 'f32', shape: [length], data: new Uint8Array(new Float32Array(length).fill(value).buffer) };
}

/** Every tensor the config implies (of its first numLayers layers, default all): matrices random in `dtype`, norms 1, biases 0. */
export function publishedShapeModel(shapeName: string, dtype: RandomMatrixType, seed = 1, numLayers?: number): ModelDesc {
  const published = MODEL_SHAPES[shapeName];
  if (!published) throw new Error(`unknown model shape ${shapeName}`);
  // fewer layers (a probe of one layer's kernels): the per-layer lists shortened to match
  const config = numLayers === undefined ? published : { ...published, numLayers, layerWindows: published.layerWindows.slice(0, numLayers) };
  const tensors = new Map<string, TensorDesc>();
  let i = 0;
  for (const [name, shape] of expectedTensorShapes(config)) {
    const t = shape.length === 2 ? randomMatrix(name, shape, dtype, seed * 7919 + ++i) : constantVector(name, shape[0]!, name.endsWith('.bias') ? 0 : 1);
    tensors.set(name, t);
  }
  return { config, tensors, source: `${shapeName} shapes, random ${dtype}` };
}

