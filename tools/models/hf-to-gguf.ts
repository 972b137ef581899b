// HF llama/qwen2/qwen3/gemma2/gemma3 weights + tokenizer -> GGUF bytes laid out as llama.cpp's convert_hf_to_gguf
// does (names, permuted llama Q/K rows, gemma's norms + 1, the vocabulary by vocab-to-gguf.ts). Not file I/O and not a general converter.
import type { DType, ModelConfig } from '../../src/model/desc';
import { configFromHf, slidingLayers } from '../../src/model/hf-config';
import { storesNormOffset } from '../../src/model/norm-multipliers';
import { expectedTensorShapes } from '../../src/model/expected-tensors';
import { ggufNameFromHf } from '../../src/model/gguf-config';
import { permuteRowsToGguf } from '../../src/model/permute';
import { f32, str, u32, writeGguf, type GgufTensorInput, type GgufValue } from './gguf-writer';
import { canEncode, encodeTensor } from './quantize';
import { vocabMetadata } from './vocab-to-gguf';

export { vocabMetadata };

export interface F32Tensor {
  shape: number[];
  /** Row-major values. */
  values: Float32Array;
}

export interface HfModelParts {
  /** Parsed config.json. */
  config: Record<string, unknown>;
  tensors: Map<string, F32Tensor>;
  /** Parsed tokenizer.json. */
  tokenizer: Record<string, unknown>;
  /** Parsed tokenizer_config.json, if any. */
  tokenizerConfig: Record<string, unknown> | null;
  name?: string;
}

/** llama.cpp's general.file_type for a model whose matrices are mostly `dtype`. */
const FILE_TYPES: Record<DType, number> = { f32: 0, f16: 1, q4_0: 2, q8_0: 7, q4_K: 15, q6_K: 18, bf16: 32 };

/** Llama-3 per-frequency factors as convert_hf_to_gguf writes them to rope_freqs.weight. */
export function llama3RopeFactors(c: ModelConfig): Float32Array | null {
  const s = c.ropeScaling;
  if (s?.type !== 'llama3') return null;
  const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
  const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
  const out = new Float32Array(c.headDim / 2);
  for (let i = 0; i < out.length; i++) {
    const wavelen = 2 * Math.PI * c.ropeTheta ** ((2 * i) / c.headDim);
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = s.factor;
    else {
      const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      out[i] = 1 / ((1 - smooth) / s.factor + smooth);
    }
  }
  return out;
}

/** Converts HF parts to a GGUF file; matrices become `dtype` where rows are whole blocks, else f32. */
export function hfToGguf(parts: HfModelParts, dtype: DType): Uint8Array {
  const { metadata, tensors } = ggufContents(parts, dtype);
  return writeGguf(metadata, tensors);
}

/** The metadata and tensors hfToGguf writes (tests edit them to build malformed files). */
export function ggufContents(parts: HfModelParts, dtype: DType): { metadata: Array<[string, GgufValue]>; tensors: GgufTensorInput[] } {
  const c = configFromHf('config.json', parts.config);
  const arch = c.arch;
  const meta = modelMetadata(c, dtype, parts.name ?? 'model');
  meta.push(...vocabMetadata(parts, c.vocabSize));

  const tensors: GgufTensorInput[] = [];
  const factors = arch === 'llama' ? llama3RopeFactors(c) : null;
  if (factors) tensors.push({ name: 'rope_freqs.weight', dtype: 'f32', shape: [factors.length], data: encodeTensor(factors, factors.length, 'f32') });
  for (const [name, shape] of expectedTensorShapes(c)) {
    const t = parts.tensors.get(name);
    if (!t) throw new Error(`missing tensor "${name}"`);
    if (t.shape.join() !== shape.join()) throw new Error(`tensor "${name}" has shape ${t.shape} but the config implies ${shape}`);
    const ggufName = ggufNameFromHf(name, arch);
    if (!ggufName) throw new Error(`no GGUF name for "${name}"`);
    let values = t.values;
    if (arch === 'llama' && /\.self_attn\.[qk]_proj\.(weight|bias)$/.test(name)) {
      values = new Float32Array(permuteRowsToGguf(new Uint8Array(values.slice().buffer), shape[0], c.headDim).buffer);
    }
    // gemma's HF norms hold w of a (1 + w) multiplier; GGUF holds the multiplier
    if (storesNormOffset(c) && name.endsWith('norm.weight')) values = values.map((w) => 1 + w);
    const cols = shape[shape.length - 1];
    const tensorType: DType = shape.length === 1 || !canEncode(dtype, cols) ? 'f32' : dtype;
    tensors.push({ name: ggufName, dtype: tensorType, shape, data: encodeTensor(values, cols, tensorType) });
  }
  return { metadata: meta, tensors };
}

/** The general.* and architecture keys llama.cpp reads for config `c` (the tokenizer.* keys are vocabMetadata's). */
export function modelMetadata(c: ModelConfig, dtype: DType, name: string): Array<[string, GgufValue]> {
  const arch = c.arch;
  const meta: Array<[string, GgufValue]> = [
    ['general.architecture', str(arch)],
    ['general.name', str(name)],
    [`${arch}.block_count`, u32(c.numLayers)],
    [`${arch}.context_length`, u32(c.maxPositionEmbeddings)],
    [`${arch}.embedding_length`, u32(c.hiddenSize)],
    [`${arch}.feed_forward_length`, u32(c.intermediateSize)],
    [`${arch}.attention.head_count`, u32(c.numHeads)],
    [`${arch}.attention.head_count_kv`, u32(c.numKvHeads)],
    [`${arch}.rope.freq_base`, f32(c.ropeTheta)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(c.rmsNormEps)],
  ];
  if (c.headDim * c.numHeads !== c.hiddenSize) {
    meta.push([`${arch}.attention.key_length`, u32(c.headDim)], [`${arch}.attention.value_length`, u32(c.headDim)]);
  }
  meta.push(
    ['general.file_type', u32(FILE_TYPES[dtype])],
    [`${arch}.vocab_size`, u32(c.vocabSize)],
    [`${arch}.rope.dimension_count`, u32(c.headDim)],
  );
  if (dtype !== 'f32' && dtype !== 'f16' && dtype !== 'bf16') meta.push(['general.quantization_version', u32(2)]);
  meta.push(...gemmaMetadata(c));
  return meta;
}

/**
 * gemma's keys as llama.cpp reads them: window and its layer period (written where it differs
 * from llama.cpp's default: gemma2 2, gemma3 6), the caps, gemma3's local RoPE base and linear
 * scaling. GGUF has no query_pre_attn_scalar: llama.cpp assumes head_dim (27B: hidden / heads).
 */
function gemmaMetadata(c: ModelConfig): Array<[string, GgufValue]> {
  if (c.arch !== 'gemma2' && c.arch !== 'gemma3') return [];
  const arch = c.arch;
  const meta: Array<[string, GgufValue]> = [];
  const window = Math.max(...c.layerWindows);
  if (window > 0) {
    const sliding = c.layerWindows.map((w) => w > 0);
    const period = Array.from({ length: c.numLayers + 1 }, (_, i) => i + 1).find((p) => slidingLayers(c.numLayers, p).every((s, l) => s === sliding[l]));
    if (period === undefined) throw new Error('sliding layers in no period llama.cpp can say');
    meta.push([`${arch}.attention.sliding_window`, u32(window)]);
    if (period !== (arch === 'gemma2' ? 2 : 6)) meta.push([`${arch}.attention.sliding_window_pattern`, u32(period)]);
  }
  if (c.attnLogitSoftcap > 0) meta.push([`${arch}.attn_logit_softcapping`, f32(c.attnLogitSoftcap)]);
  if (c.finalLogitSoftcap > 0) meta.push([`${arch}.final_logit_softcapping`, f32(c.finalLogitSoftcap)]);
  if (c.slidingRopeTheta !== null) meta.push([`${arch}.rope.freq_base_swa`, f32(c.slidingRopeTheta)]);
  if (c.ropeScaling?.type === 'linear') meta.push([`${arch}.rope.scaling.type`, str('linear')], [`${arch}.rope.scaling.factor`, f32(c.ropeScaling.factor)]);
  return meta;
}
