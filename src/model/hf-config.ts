// Hugging Face config.json -> ModelConfig for llama, qwen2 and qwen3 (GQA, head_dim,
// Llama-3 rope_scaling, tied embeddings). Not weights, not the tokenizer.
import type { Arch, ModelConfig, RopeScaling } from './desc';
import { ModelFormatError, check } from './errors';

const ARCH_BY_MODEL_TYPE: Record<string, Arch> = { llama: 'llama', qwen2: 'qwen2', qwen3: 'qwen3' };
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
  if (type !== 'llama3') throw new ModelFormatError(file, `unsupported rope_scaling type "${String(type)}" (supported: llama3)`);
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
  const c = raw as Record<string, unknown>;
  const modelType = String(c.model_type ?? (Array.isArray(c.architectures) ? c.architectures[0] : 'missing'));
  const arch = ARCH_BY_MODEL_TYPE[modelType];
  if (!arch) throw new ModelFormatError(file, `unsupported architecture "${modelType}" (supported: llama, qwen2, qwen3)`);
  const hiddenSize = intField(file, c, 'hidden_size', MAX_MODEL_DIM);
  const numHeads = intField(file, c, 'num_attention_heads', 4096);
  const numKvHeads = intField(file, c, 'num_key_value_heads', 4096, numHeads);
  check(numHeads % numKvHeads === 0, file, `num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`);
  const headDim = c.head_dim === null || c.head_dim === undefined ? hiddenSize / numHeads : intField(file, c, 'head_dim', 4096);
  check(Number.isInteger(headDim) && headDim % 2 === 0, file, `head dimension ${headDim} must be an even integer`);
  const bos = tokenIds(c.bos_token_id);
  return {
    arch,
    vocabSize: intField(file, c, 'vocab_size', 1 << 22),
    hiddenSize,
    intermediateSize: intField(file, c, 'intermediate_size', MAX_MODEL_DIM),
    numLayers: intField(file, c, 'num_hidden_layers', MAX_LAYERS),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: numField(file, c, 'rms_norm_eps', 1e-6),
    ropeTheta: numField(file, c, 'rope_theta', 10000),
    ropeScaling: ropeScaling(file, c.rope_scaling),
    maxPositionEmbeddings: intField(file, c, 'max_position_embeddings', 1 << 24, 2048),
    tieWordEmbeddings: c.tie_word_embeddings === true,
    attentionBias: arch === 'qwen2' ? true : c.attention_bias === true,
    qkNorm: arch === 'qwen3',
    bosTokenId: bos.length > 0 ? bos[0] : null,
    eosTokenIds: tokenIds(c.eos_token_id),
  };
}
