// Random-weight models with published shapes (SmolLM2-135M/360M, Qwen2.5-0.5B, Llama-3.2-1B) written straight as quantized blocks
// for benchmarks: drawing 0.5B f32 values as synth.ts does would take minutes. Not for reading outputs.
import type { ModelConfig, ModelDesc, TensorDesc } from '../../src/model/desc';
import { expectedTensorShapes } from '../../src/model/expected-tensors';
import { tensorBytes } from '../../src/model/quant-layout';

/** Config shapes as published in each model's config.json. */
export const MODEL_SHAPES: Record<string, ModelConfig> = {
  'SmolLM2-135M': {
    arch: 'llama', vocabSize: 49152, hiddenSize: 576, intermediateSize: 1536, numLayers: 30, numHeads: 9, numKvHeads: 3, headDim: 64,
    rmsNormEps: 1e-5, ropeTheta: 100000, ropeScaling: null, maxPositionEmbeddings: 8192, tieWordEmbeddings: true,
    attentionBias: false, qkNorm: false, bosTokenId: 1, eosTokenIds: [2],
  },
  'SmolLM2-360M': {
    arch: 'llama', vocabSize: 49152, hiddenSize: 960, intermediateSize: 2560, numLayers: 32, numHeads: 15, numKvHeads: 5, headDim: 64,
    rmsNormEps: 1e-5, ropeTheta: 100000, ropeScaling: null, maxPositionEmbeddings: 8192, tieWordEmbeddings: true,
    attentionBias: false, qkNorm: false, bosTokenId: 1, eosTokenIds: [2],
  },
  'Llama-3.2-1B': {
    arch: 'llama', vocabSize: 128256, hiddenSize: 2048, intermediateSize: 8192, numLayers: 16, numHeads: 32, numKvHeads: 8, headDim: 64,
    rmsNormEps: 1e-5, ropeTheta: 500000, ropeScaling: { type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
    maxPositionEmbeddings: 131072, tieWordEmbeddings: true, attentionBias: false, qkNorm: false, bosTokenId: 128000, eosTokenIds: [128001, 128008, 128009],
  },
  'Qwen2.5-0.5B': {
    arch: 'qwen2', vocabSize: 151936, hiddenSize: 896, intermediateSize: 4864, numLayers: 24, numHeads: 14, numKvHeads: 2, headDim: 64,
    rmsNormEps: 1e-6, ropeTheta: 1000000, ropeScaling: null, maxPositionEmbeddings: 32768, tieWordEmbeddings: true,
    attentionBias: true, qkNorm: false, bosTokenId: null, eosTokenIds: [151643],
  },
};

/** xorshift32 bytes: fast and deterministic, no need for statistical quality. */
function randomBytes(n: number, seed: number): Uint8Array {
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

/** Block scale (f16 at each block's start for q8_0/q4_0): 2^-10 keeps activations finite. */
const F16_SCALE = 0x1400;

function randomMatrix(name: string, shape: number[], dtype: 'q8_0' | 'q4_0', seed: number): TensorDesc {
  const data = randomBytes(tensorBytes(dtype, shape), seed);
  const blockBytes = dtype === 'q8_0' ? 34 : 18;
  for (let at = 0; at < data.length; at += blockBytes) {
    data[at] = F16_SCALE & 0xff;
    data[at + 1] = F16_SCALE >> 8;
  }
  return { name, dtype, shape, data };
}

function constantVector(name: string, length: number, value: number): TensorDesc {
  return { name, dtype: 'f32', shape: [length], data: new Uint8Array(new Float32Array(length).fill(value).buffer) };
}

/** Every tensor the config implies: matrices random in `dtype`, norms 1, biases 0. */
export function publishedShapeModel(shapeName: string, dtype: 'q8_0' | 'q4_0', seed = 1): ModelDesc {
  const config = MODEL_SHAPES[shapeName];
  if (!config) throw new Error(`unknown model shape ${shapeName}`);
  const tensors = new Map<string, TensorDesc>();
  let i = 0;
  for (const [name, shape] of expectedTensorShapes(config)) {
    const t = shape.length === 2 ? randomMatrix(name, shape, dtype, seed * 7919 + ++i) : constantVector(name, shape[0]!, name.endsWith('.bias') ? 0 : 1);
    tensors.set(name, t);
  }
  return { config, tensors, source: `${shapeName} shapes, random ${dtype}` };
}

