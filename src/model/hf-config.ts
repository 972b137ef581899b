// Hugging Face config.json -> ModelConfig for llama, qwen2, qwen3, gemma2 and gemma3 (GQA, head_dim,
// Llama-3 and linear rope_scaling, tied embeddings, gemma's windows and caps). Not weights, not the tokenizer.
import type { Arch, ModelConfig, RopeScaling } from './desc';
import { ModelFormatError, check } from './errors';

const ARCH_BY_MODEL_TYPE: Record<string, Arch> = { llama: 'llama', qwen2: 'qwen2', qwen3: 'qwen3', gemma2: 'gemma2', gemma3_text: 'gemma3', gemma3: 'gemma3' };
/** Every architecture this project runs, for messages. */
export const SUPPORTED_ARCHES = 'llama, qwen2, qwen3, gemma2, gemma3';
/** Dimensions above this are malformed for any model this project can run. */
export const MAX_MODEL_DIM = 1 << 20;
export const MAX_LAYERS = 1024;

function intField(file: string, c: Record<string, unknown>, key: string, max: number, fallback?: number): number {
  const v = c[key] ?? fallback;
  check(typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max, file, `"${key}" must be an integer in [1, ${max}], got ${JSON.stringify(v)}`);
  return v;
}

function numField(file: string, c: Record<string, unknown>, key: string, fallback: number): number {
  const v = c[key] ?? fallback;
  check(typeof v === 'number' && Number.isFinite(v) && v > 0, file, `"${key}" must be a positive number, got ${JSON.stringify(v)}`);
  return v;
}

function tokenIds(v: unknown): number[] {
  if (typeof v === 'number' && Number.isInteger(v)) return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === 'number' && Number.isInteger(x));
  return [];
}

function ropeScaling(file: string, raw: unknown): RopeScaling | null {
  if (raw === null || raw === undefined) return null;
  check(typeof raw === 'object', file, '"rope_scaling" must be an object or null');
  const r = raw as Record<string, unknown>;
  const type = r.rope_type ?? r.type;
  if (type === 'default') return null;
  if (type === 'linear') return { type: 'linear', factor: numField(file, r, 'factor', NaN) };
  if (type !== 'llama3') throw new ModelFormatError(file, `unsupported rope_scaling type "${String(type)}" (supported: llama3, linear)`);
  return {
    type: 'llama3',
    factor: numField(file, r, 'factor', NaN),
    lowFreqFactor: numField(file, r, 'low_freq_factor', NaN),
    highFreqFactor: numField(file, r, 'high_freq_factor', NaN),
    originalMaxPositionEmbeddings: intField(file, r, 'original_max_position_embeddings', 1 << 24),
  };
}

/** Parsed config.json (any object) -> ModelConfig; `file` names it in errors. */
export function configFromHf(file: string, raw: unknown): ModelConfig {
  check(raw !== null && typeof raw === 'object' && !Array.isArray(raw), file, 'config is not a JSON object');
  const outer = raw as Record<string, unknown>;
  const modelType = String(outer.model_type ?? (Array.isArray(outer.architectures) ? outer.architectures[0] : 'missing'));
  const arch = ARCH_BY_MODEL_TYPE[modelType];
  if (!arch) throw new ModelFormatError(file, `unsupported architecture "${modelType}" (supported: ${SUPPORTED_ARCHES})`);
  // gemma3 with vision (4B and up) keeps the language model's config under text_config
  const nested = modelType === 'gemma3' && outer.text_config !== null && typeof outer.text_config === 'object';
  const c = nested ? { ...outer, ...(outer.text_config as Record<string, unknown>) } : outer;
  const hiddenSize = intField(file, c, 'hidden_size', MAX_MODEL_DIM);
  const numHeads = intField(file, c, 'num_attention_heads', 4096);
  const numKvHeads = intField(file, c, 'num_key_value_heads', 4096, numHeads);
  check(numHeads % numKvHeads === 0, file, `num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`);
  const headDim = c.head_dim === null || c.head_dim === undefined ? hiddenSize / numHeads : intField(file, c, 'head_dim', 4096);
  check(Number.isInteger(headDim) && headDim % 2 === 0, file, `head dimension ${headDim} must be an even integer`);
  const bos = tokenIds(c.bos_token_id);
  const numLayers = intField(file, c, 'num_hidden_layers', MAX_LAYERS);
  const gemma = arch === 'gemma2' || arch === 'gemma3';
  return {
    arch,
    vocabSize: intField(file, c, 'vocab_size', 1 << 22),
    hiddenSize,
    intermediateSize: intField(file, c, 'intermediate_size', MAX_MODEL_DIM),
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: numField(file, c, 'rms_norm_eps', 1e-6),
    ropeTheta: numField(file, c, 'rope_theta', 10000),
    ropeScaling: ropeScaling(file, c.rope_scaling),
    maxPositionEmbeddings: intField(file, c, 'max_position_embeddings', 1 << 24, 2048),
    // gemma ties by default (transformers' Gemma configs)
    tieWordEmbeddings: c.tie_word_embeddings === true || (gemma && c.tie_word_embeddings === undefined),
    attentionBias: arch === 'qwen2' ? true : c.attention_bias === true,
    qkNorm: arch === 'qwen3' || arch === 'gemma3',
    bosTokenId: bos.length > 0 ? bos[0] : null,
    eosTokenIds: tokenIds(c.eos_token_id),
    ...(gemma ? gemmaFields(file, c, arch, hiddenSize, headDim, numLayers) : plainFields(headDim, numLayers)),
  };
}

type ArchFields = Pick<ModelConfig, 'embedScale' | 'mlpActivation' | 'postNorms' | 'attentionScale' | 'attnLogitSoftcap' | 'finalLogitSoftcap' | 'layerWindows' | 'slidingRopeTheta'>;

/** llama, qwen2, qwen3: SwiGLU, no caps, every layer global. */
export function plainFields(headDim: number, numLayers: number): ArchFields {
  return {
    embedScale: 1,
    mlpActivation: 'silu',
    postNorms: false,
    attentionScale: 1 / Math.sqrt(headDim),
    attnLogitSoftcap: 0,
    finalLogitSoftcap: 0,
    layerWindows: new Array<number>(numLayers).fill(0),
    slidingRopeTheta: null,
  };
}

/**
 * Which layers slide, as transformers and llama.cpp agree: gemma2 every other layer from layer 0
 * (period 2), gemma3 all but every sixth (period 6: layers 5, 11, ... are global); a config's
 * `layer_types` list, where given, says it per layer.
 */
export function slidingLayers(numLayers: number, period: number): boolean[] {
  return Array.from({ length: numLayers }, (_, l) => period > 0 && l % period < period - 1);
}

function gemmaFields(file: string, c: Record<string, unknown>, arch: 'gemma2' | 'gemma3', hidden: number, headDim: number, numLayers: number): ArchFields {
  const act = c.hidden_activation ?? c.hidden_act ?? 'gelu_pytorch_tanh';
  check(act === 'gelu_pytorch_tanh' || act === 'gelu', file, `unsupported hidden_activation ${JSON.stringify(act)} (supported: gelu_pytorch_tanh)`);
  const cap = (key: string): number => (c[key] === null || c[key] === undefined ? 0 : numField(file, c, key, 0));
  const window = intField(file, c, 'sliding_window', 1 << 24, arch === 'gemma2' ? 4096 : 512);
  let sliding: boolean[];
  if (Array.isArray(c.layer_types)) {
    check(c.layer_types.length === numLayers, file, `"layer_types" has ${c.layer_types.length} entries for ${numLayers} layers`);
    sliding = c.layer_types.map((t) => t === 'sliding_attention');
  } else {
    const period = c.sliding_window_pattern === undefined ? (arch === 'gemma2' ? 2 : 6) : intField(file, c, 'sliding_window_pattern', MAX_LAYERS);
    sliding = slidingLayers(numLayers, period);
  }
  return {
    embedScale: Math.fround(Math.sqrt(hidden)),
    mlpActivation: 'gelu_tanh',
    postNorms: true,
    attentionScale: 1 / Math.sqrt(numField(file, c, 'query_pre_attn_scalar', headDim)),
    attnLogitSoftcap: cap('attn_logit_softcapping'),
    finalLogitSoftcap: cap('final_logit_softcapping'),
    layerWindows: sliding.map((s) => (s ? window : 0)),
    slidingRopeTheta: arch === 'gemma3' ? numField(file, c, 'rope_local_base_freq', 10000) : null,
  };
}
