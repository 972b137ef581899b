// GGUF metadata -> ModelConfig for llama, qwen2, qwen3, gemma2, gemma3, and GGUF tensor names -> HF names.
// Not parsing (gguf.ts) and not tensor reading (gguf-loader.ts).
import type { Arch, ModelConfig, Llama3RopeScaling } from './desc';
import type { GgufMetadataValue } from './gguf';
import { ModelFormatError, check } from './errors';
import { MAX_LAYERS, MAX_MODEL_DIM, plainFields, slidingLayers, SUPPORTED_ARCHES } from './hf-config';

const ARCHES: readonly Arch[] = ['llama', 'qwen2', 'qwen3', 'gemma2', 'gemma3'];

/** gemma's norms around attention and the MLP, whose HF names differ from llama's (llama's ffn_norm is its post_attention_layernorm). */
const GEMMA_LAYER_NAMES: Record<string, string> = {
  'post_attention_norm.weight': 'post_attention_layernorm.weight',
  'ffn_norm.weight': 'pre_feedforward_layernorm.weight',
  'post_ffw_norm.weight': 'post_feedforward_layernorm.weight',
};

const LAYER_NAMES: Record<string, string> = {
  'attn_norm.weight': 'input_layernorm.weight',
  'attn_q.weight': 'self_attn.q_proj.weight',
  'attn_k.weight': 'self_attn.k_proj.weight',
  'attn_v.weight': 'self_attn.v_proj.weight',
  'attn_q.bias': 'self_attn.q_proj.bias',
  'attn_k.bias': 'self_attn.k_proj.bias',
  'attn_v.bias': 'self_attn.v_proj.bias',
  'attn_output.weight': 'self_attn.o_proj.weight',
  'attn_q_norm.weight': 'self_attn.q_norm.weight',
  'attn_k_norm.weight': 'self_attn.k_norm.weight',
  'ffn_norm.weight': 'post_attention_layernorm.weight',
  'ffn_gate.weight': 'mlp.gate_proj.weight',
  'ffn_up.weight': 'mlp.up_proj.weight',
  'ffn_down.weight': 'mlp.down_proj.weight',
};
const GLOBAL_NAMES: Record<string, string> = {
  'token_embd.weight': 'model.embed_tokens.weight',
  'output_norm.weight': 'model.norm.weight',
  'output.weight': 'lm_head.weight',
};

function layerNames(arch: Arch): Record<string, string> {
  return arch === 'gemma2' || arch === 'gemma3' ? { ...LAYER_NAMES, ...GEMMA_LAYER_NAMES } : LAYER_NAMES;
}

/** HF name for a GGUF tensor name of `arch`, or null for tensors this project does not use. */
export function hfNameFromGguf(name: string, arch: Arch): string | null {
  if (name in GLOBAL_NAMES) return GLOBAL_NAMES[name];
  const names = layerNames(arch);
  const m = /^blk\.(\d+)\.(.+)$/.exec(name);
  if (m && m[2] in names) return `model.layers.${Number(m[1])}.${names[m[2]]}`;
  return null;
}

/** GGUF name for an HF tensor name of `arch` (writers). */
export function ggufNameFromHf(name: string, arch: Arch): string | null {
  for (const [g, h] of Object.entries(GLOBAL_NAMES)) if (h === name) return g;
  const m = /^model\.layers\.(\d+)\.(.+)$/.exec(name);
  if (!m) return null;
  for (const [g, h] of Object.entries(layerNames(arch))) if (h === m[2]) return `blk.${m[1]}.${g}`;
  return null;
}

/** The shortest decimal that rounds to the same f32, so f32 1e-5 reads back as 1e-5. */
function shortestF32(v: number): number {
  if (Number.isInteger(v)) return v;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(v.toPrecision(digits));
    if (Math.fround(candidate) === v) return candidate;
  }
  return v;
}

function scalar(v: GgufMetadataValue | undefined): number | undefined {
  if (typeof v === 'number') return shortestF32(v);
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : Infinity;
  return undefined;
}

/**
 * Recovers Llama-3 rope scaling from the per-frequency factors llama.cpp stores as
 * rope_freqs.weight. Only the wavelength thresholds orig/low and orig/high matter, so orig is
 * fixed at 8192 and low/high fitted: exact whenever two or more factors lie between 1 and factor.
 */
export function ropeScalingFromFactors(factors: Float32Array, headDim: number, theta: number): Llama3RopeScaling | null {
  const factor = Math.max(...factors);
  if (!(factor > 1 + 1e-6)) return null;
  const orig = 8192;
  const xs: number[] = [];
  const ss: number[] = [];
  let lastOne = 0; // 1/wavelength of the lowest frequency still unscaled
  for (let i = 0; i < factors.length; i++) {
    const invWavelen = theta ** ((-2 * i) / headDim) / (2 * Math.PI);
    const f = factors[i];
    if (Math.abs(f - 1) < 1e-6) lastOne = invWavelen;
    else if (Math.abs(f - factor) > 1e-6 * factor) {
      xs.push(invWavelen);
      ss.push((1 / f - 1 / factor) / (1 - 1 / factor));
    }
  }
  let a: number;
  let b: number;
  if (xs.length >= 2) {
    const n = xs.length;
    const mx = xs.reduce((p, q) => p + q, 0) / n;
    const ms = ss.reduce((p, q) => p + q, 0) / n;
    a = xs.reduce((p, x, i) => p + (x - mx) * (ss[i] - ms), 0) / xs.reduce((p, x) => p + (x - mx) ** 2, 0);
    b = ms - a * mx;
  } else {
    // No ramp to fit: put it just inside the gap between the last unscaled and first fully
    // scaled frequency, which classifies every stored frequency the same way.
    const firstScaledIndex = factors.findIndex((f) => Math.abs(f - factor) <= 1e-6 * factor);
    const lowX = (theta ** ((-2 * firstScaledIndex) / headDim) / (2 * Math.PI)) * 1.0001;
    const highX = lastOne > 0 ? lastOne * 0.9999 : lowX * 4;
    a = 1 / (highX - lowX);
    b = -lowX * a;
  }
  // s = (orig * x - low) / (high - low)  =>  high - low = orig / a, low = -b * (high - low)
  const span = orig / a;
  const low = -b * span;
  return { type: 'llama3', factor, lowFreqFactor: low, highFreqFactor: low + span, originalMaxPositionEmbeddings: orig };
}

export function configFromGguf(file: string, meta: Map<string, GgufMetadataValue>, vocabRows: number): ModelConfig {
  const archName = String(meta.get('general.architecture') ?? 'missing');
  if (!ARCHES.includes(archName as Arch)) {
    throw new ModelFormatError(file, `unsupported architecture "${archName}" (supported: ${SUPPORTED_ARCHES})`);
  }
  const arch = archName as Arch;
  const int = (key: string, max: number, fallback?: number): number => {
    const v = scalar(meta.get(`${arch}.${key}`)) ?? fallback;
    check(v !== undefined && Number.isInteger(v) && v >= 1 && v <= max, file, `"${arch}.${key}" must be an integer in [1, ${max}], got ${String(meta.get(`${arch}.${key}`))}`);
    return v;
  };
  const num = (key: string, fallback: number): number => {
    const v = scalar(meta.get(`${arch}.${key}`)) ?? fallback;
    check(Number.isFinite(v) && v > 0, file, `"${arch}.${key}" must be a positive number`);
    return v;
  };
  const hiddenSize = int('embedding_length', MAX_MODEL_DIM);
  const numHeads = int('attention.head_count', 4096);
  const numKvHeads = int('attention.head_count_kv', 4096, numHeads);
  check(numHeads % numKvHeads === 0, file, `head_count ${numHeads} is not a multiple of head_count_kv ${numKvHeads}`);
  const headDim = int('attention.key_length', 4096, scalar(meta.get(`${arch}.rope.dimension_count`)) ?? hiddenSize / numHeads);
  check(headDim % 2 === 0, file, `head dimension ${headDim} must be even`);
  const eos = scalar(meta.get('tokenizer.ggml.eos_token_id'));
  const eot = scalar(meta.get('tokenizer.ggml.eot_token_id'));
  const bos = scalar(meta.get('tokenizer.ggml.bos_token_id'));
  const numLayers = int('block_count', MAX_LAYERS);
  const gemma = arch === 'gemma2' || arch === 'gemma3';
  const linearFactor = String(meta.get(`${arch}.rope.scaling.type`)) === 'linear' ? num('rope.scaling.factor', 1) : 1;
  return {
    arch,
    vocabSize: int('vocab_size', 1 << 22, vocabRows),
    hiddenSize,
    intermediateSize: int('feed_forward_length', MAX_MODEL_DIM),
    numLayers,
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: num('attention.layer_norm_rms_epsilon', 1e-6),
    ropeTheta: num('rope.freq_base', 10000),
    ropeScaling: linearFactor !== 1 ? { type: 'linear', factor: linearFactor } : null,
    maxPositionEmbeddings: int('context_length', 1 << 24, 2048),
    tieWordEmbeddings: false,
    attentionBias: arch === 'qwen2',
    qkNorm: arch === 'qwen3' || arch === 'gemma3',
    bosTokenId: bos ?? null,
    eosTokenIds: [...new Set([eos, eot].filter((x): x is number => x !== undefined))],
    ...(gemma ? gemmaFieldsFromGguf(meta, arch, hiddenSize, numHeads, headDim, numLayers, num) : plainFields(headDim, numLayers)),
  };
}

/**
 * gemma's fields as llama.cpp reads them: window and period (gemma2: 4096 every other layer,
 * gemma3: every sixth layer global), the caps (gemma3 has no attention cap), the sliding layers'
 * RoPE base (gemma3: rope.freq_base_swa, 10000 when absent), and the attention scale, which GGUF
 * does not store: 1 / sqrt(headDim), except the 27B models (gemma2 46 layers, gemma3 62), whose
 * query_pre_attn_scalar is hidden / heads.
 */
function gemmaFieldsFromGguf(
  meta: Map<string, GgufMetadataValue>,
  arch: 'gemma2' | 'gemma3',
  hidden: number,
  numHeads: number,
  headDim: number,
  numLayers: number,
  num: (key: string, fallback: number) => number,
): ReturnType<typeof plainFields> {
  const optional = (key: string): number => scalar(meta.get(`${arch}.${key}`)) ?? 0;
  const window = optional('attention.sliding_window') || (arch === 'gemma2' ? 4096 : 0);
  const period = optional('attention.sliding_window_pattern') || (arch === 'gemma2' ? 2 : 6);
  const sliding = window > 0 ? slidingLayers(numLayers, period) : new Array<boolean>(numLayers).fill(false);
  const is27b = numLayers === (arch === 'gemma2' ? 46 : 62);
  return {
    embedScale: Math.fround(Math.sqrt(hidden)),
    mlpActivation: 'gelu_tanh',
    postNorms: true,
    attentionScale: 1 / Math.sqrt(is27b ? hidden / numHeads : headDim),
    attnLogitSoftcap: arch === 'gemma2' ? optional('attn_logit_softcapping') : 0,
    finalLogitSoftcap: optional('final_logit_softcapping'),
    layerWindows: sliding.map((s) => (s ? window : 0)),
    slidingRopeTheta: arch === 'gemma3' ? num('rope.freq_base_swa', 10000) : null,
  };
}
