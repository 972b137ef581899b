// The one generator of small random-weight models (fixed seed) for llama, qwen2, qwen3, gemma2 and gemma3: in HF layout, GGUF or memory,
// for tests of loaders, runners and kernels. Test scaffolding (lint: product code may not import it); not trained, not committed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Arch, DType, ModelDesc, TensorDesc } from '../desc';
import { mulberry32 } from '../../engine/seeded-random';
import { configFromHf } from '../hf-config';
import { expectedTensorShapes } from '../expected-tensors';
import { normsAsMultipliers, storesNormOffset } from '../norm-multipliers';
import { hfToGguf, type F32Tensor, type HfModelParts } from '../../../tools/models/hf-to-gguf';
import { safetensorsIndex, writeSafetensors, type SafetensorsInput } from '../../../tools/models/safetensors-writer';
import { encodeTensor } from '../../../tools/models/quantize';

export interface SynthDims {
  hidden: number;
  intermediate: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
  maxPositions: number;
}

/** hidden and intermediate are multiples of 256 so every matrix fits q4_K/q6_K blocks. */
export const DEFAULT_SYNTH_DIMS: SynthDims = {
  hidden: 256, intermediate: 512, layers: 2, heads: 4, kvHeads: 2, headDim: 64, vocab: 259, maxPositions: 2048,
};

/** Shapes small enough for CPU-reference tests of every op (hidden 32, head 8, vocab 61). */
export const TINY_SYNTH_DIMS: Partial<SynthDims> = { hidden: 32, intermediate: 48, layers: 2, heads: 4, kvHeads: 2, headDim: 8, vocab: 61 };

export interface SynthOptions {
  arch: Arch;
  seed?: number;
  dims?: Partial<SynthDims>;
  tieWordEmbeddings?: boolean;
}

export interface WriteSynthOptions extends SynthOptions {
  /** 'hf' writes config.json, safetensors and tokenizer files; 'gguf' writes model.gguf. */
  format: 'hf' | 'gguf';
  /** hf: f32 | f16 | bf16. gguf: any DType (vectors stay f32). */
  dtype: DType;
  dir: string;
  /** hf only: split weights over this many safetensors shards with an index. */
  shards?: number;
}

const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const CHAT_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

/** GPT-2's reversible byte -> printable character map (ByteLevel pre-tokenizers use it). */
export function byteToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const out: string[] = new Array(256);
  for (const b of bs) out[b] = String.fromCodePoint(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (out[b] === undefined) out[b] = String.fromCodePoint(256 + n++);
  return out;
}

/** The byte-level tokenizer.json of the default model: 256 byte tokens + 3 specials, no merges. */
export function byteLevelTokenizer(): { tokenizer: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  const vocab: Record<string, number> = {};
  byteToUnicode().forEach((s, i) => (vocab[s] = i));
  SPECIALS.forEach((s, i) => (vocab[s] = 256 + i));
  const added = SPECIALS.map((content, i) => ({
    id: 256 + i, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
  const tokenizer = {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: byteLevel, post_processor: null, decoder: byteLevel,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges: [],
    },
  };
  const tokenizerConfig = {
    add_bos_token: false, add_eos_token: false, bos_token: SPECIALS[0], eos_token: SPECIALS[2], pad_token: SPECIALS[0],
    unk_token: null, model_max_length: 2048, clean_up_tokenization_spaces: false,
    tokenizer_class: 'PreTrainedTokenizerFast', chat_template: CHAT_TEMPLATE,
  };
  return { tokenizer, tokenizerConfig };
}

/** The synthetic gemma models' window: short, so the 50-token prompts of the tests cross it. */
export const SYNTH_SLIDING_WINDOW = 16;

/** config.json for the architecture, in the keys transformers writes. */
function hfConfig(arch: Arch, d: SynthDims, tie: boolean): Record<string, unknown> {
  const architectures = { llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM', gemma2: 'Gemma2ForCausalLM', gemma3: 'Gemma3ForCausalLM' };
  const base: Record<string, unknown> = {
    architectures: [architectures[arch]],
    model_type: arch === 'gemma3' ? 'gemma3_text' : arch, vocab_size: d.vocab, hidden_size: d.hidden, intermediate_size: d.intermediate,
    num_hidden_layers: d.layers, num_attention_heads: d.heads, num_key_value_heads: d.kvHeads,
    head_dim: d.headDim, rms_norm_eps: 1e-5, rope_theta: 10000, max_position_embeddings: d.maxPositions,
    tie_word_embeddings: tie, bos_token_id: 256, eos_token_id: 258, hidden_act: 'silu', torch_dtype: 'float32',
  };
  if (arch === 'llama') base.attention_bias = false;
  if (arch === 'gemma2' || arch === 'gemma3') {
    // Every gemma feature made to bite at these sizes: a short window, caps near the values
    // random weights reach, gemma3's own local RoPE base and linear scaling on its global layers.
    // query_pre_attn_scalar = head_dim, which GGUF cannot say otherwise (llama.cpp assumes it).
    Object.assign(base, {
      hidden_act: undefined, hidden_activation: 'gelu_pytorch_tanh', query_pre_attn_scalar: d.headDim,
      sliding_window: SYNTH_SLIDING_WINDOW, sliding_window_pattern: 2,
    });
    if (arch === 'gemma2') Object.assign(base, { attn_logit_softcapping: 4, final_logit_softcapping: 8 });
    else Object.assign(base, { rope_theta: 1000000, rope_local_base_freq: 10000, rope_scaling: { rope_type: 'linear', factor: 8 } });
  }
  return base;
}

/** The model as f32 tensors in HF layout plus its JSON files; same seed -> same values. */
export function syntheticModel(opts: SynthOptions): HfModelParts {
  const dims = { ...DEFAULT_SYNTH_DIMS, ...opts.dims };
  const config = hfConfig(opts.arch, dims, opts.tieWordEmbeddings ?? false);
  const random = mulberry32(opts.seed ?? 1);
  const tensors = new Map<string, F32Tensor>();
  const parsed = configFromHf('config.json', config);
  // gemma's HF norms hold w of a (1 + w) multiplier
  const normCenter = storesNormOffset(parsed) ? 0 : 1;
  for (const [name, shape] of expectedTensorShapes(parsed)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const values = new Float32Array(n);
    // Norm multipliers near 1, biases small, matrices scaled by 1/sqrt(fan-in) so activations stay O(1).
    const isNorm = /norm\.weight$/.test(name);
    const scale = isNorm ? 0.2 : name.endsWith('.bias') ? 0.1 : 2 / Math.sqrt(shape[shape.length - 1]);
    for (let i = 0; i < n; i++) values[i] = (isNorm ? normCenter : 0) + (random() * 2 - 1) * scale;
    tensors.set(name, { shape, values });
  }
  return { config, tensors, ...byteLevelTokenizer(), name: `synthetic-${opts.arch}` };
}

/** The same model as an f32 ModelDesc in memory, no files: for runner and op tests. */
export function syntheticModelDesc(opts: SynthOptions): ModelDesc {
  const parts = syntheticModel(opts);
  const config = configFromHf('config.json', parts.config);
  const tensors = new Map<string, TensorDesc>();
  for (const [name, t] of parts.tensors) {
    tensors.set(name, { name, dtype: 'f32', shape: t.shape, data: new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength) });
  }
  // The byte tokenizer's specials sit past a tiny vocabulary: such a model has none.
  const inVocab = (id: number) => id < config.vocabSize;
  const bosTokenId = config.bosTokenId !== null && inVocab(config.bosTokenId) ? config.bosTokenId : null;
  return {
    config: { ...config, bosTokenId, eosTokenIds: config.eosTokenIds.filter(inVocab) },
    tensors: normsAsMultipliers('model.safetensors', config, tensors),
    source: `synthetic ${opts.arch} model`,
  };
}

/** HF folder files (name -> bytes) for parts stored as f32, f16 or bf16. */
export function hfFiles(parts: HfModelParts, dtype: 'f32' | 'f16' | 'bf16', shards = 1): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  const files = new Map<string, Uint8Array>();
  files.set('config.json', enc.encode(JSON.stringify({ ...parts.config, torch_dtype: { f32: 'float32', f16: 'float16', bf16: 'bfloat16' }[dtype] }, null, 2)));
  files.set('tokenizer.json', enc.encode(JSON.stringify(parts.tokenizer)));
  if (parts.tokenizerConfig) files.set('tokenizer_config.json', enc.encode(JSON.stringify(parts.tokenizerConfig, null, 2)));
  const inputs: SafetensorsInput[] = [...parts.tensors].map(([name, t]) => ({
    name, dtype, shape: t.shape, data: encodeTensor(t.values, t.shape[t.shape.length - 1], dtype),
  }));
  if (shards <= 1) {
    files.set('model.safetensors', writeSafetensors(inputs));
    return files;
  }
  const weightMap: Record<string, string> = {};
  let total = 0;
  for (let s = 0; s < shards; s++) {
    const fileName = `model-${String(s + 1).padStart(5, '0')}-of-${String(shards).padStart(5, '0')}.safetensors`;
    const mine = inputs.filter((_, i) => i % shards === s);
    for (const t of mine) {
      weightMap[t.name] = fileName;
      total += t.data.length;
    }
    files.set(fileName, writeSafetensors(mine));
  }
  files.set('model.safetensors.index.json', enc.encode(safetensorsIndex(weightMap, total)));
  return files;
}

/** Writes a synthetic model to opts.dir; returns the written file paths. */
export function writeSyntheticModel(opts: WriteSynthOptions): string[] {
  const parts = syntheticModel(opts);
  mkdirSync(opts.dir, { recursive: true });
  const files = opts.format === 'gguf'
    ? new Map([['model.gguf', hfToGguf(parts, opts.dtype)]])
    : hfFiles(parts, checkHfDtype(opts.dtype), opts.shards);
  return [...files].map(([name, bytes]) => {
    const path = join(opts.dir, name);
    writeFileSync(path, bytes);
    return path;
  });
}

function checkHfDtype(dtype: DType): 'f32' | 'f16' | 'bf16' {
  if (dtype === 'f32' || dtype === 'f16' || dtype === 'bf16') return dtype;
  throw new Error(`HF safetensors synthetic models are f32, f16 or bf16, not ${dtype}`);
}
