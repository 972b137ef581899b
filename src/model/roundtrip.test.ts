// Writer -> loader round trips for every architecture and stored dtype, HF vs GGUF equality
// (which proves the llama Q/K row permutation round trip), sharding, ties, rope scaling.
import { describe, expect, it } from 'vitest';
import type { Arch, DType, ModelDesc } from './desc';
import { bytesSource, mapOpener, type LoadProgress } from './byte-source';
import { loadHfModel } from './hf-loader';
import { loadGgufModel } from './gguf-loader';
import { readGgufHeader } from './gguf';
import { dequantize } from '../reference/dequant';
import { hfFiles, syntheticModel } from './testing/synthetic-model-fixtures';
import { hfToGguf, llama3RopeFactors } from '../../tools/models/hf-to-gguf';
import { encodeTensor } from '../../tools/models/quantize';
import { configFromHf } from './hf-config';

/** Bitwise equality of two arrays, reported as the first differing index (fast on big arrays). */
function expectSame(got: ArrayLike<number>, want: ArrayLike<number>, label: string): void {
  expect(got.length, label).toBe(want.length);
  let firstDiff = -1;
  for (let i = 0; i < want.length && firstDiff < 0; i++) if (!Object.is(got[i], want[i])) firstDiff = i;
  expect(firstDiff < 0 ? 'same' : `differs at ${firstDiff}: ${got[firstDiff]} vs ${want[firstDiff]}`, label).toBe('same');
}

const ARCHES: Arch[] = ['llama', 'qwen2', 'qwen3'];
const GGUF_DTYPES: DType[] = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'];
// qwen3 gets a head_dim that is not hidden / heads, as real Qwen3 models have.
const dimsFor = (arch: Arch) => (arch === 'qwen3' ? { headDim: 128 } : {});

async function loadHf(arch: Arch, dtype: 'f32' | 'f16' | 'bf16', shards = 1): Promise<ModelDesc> {
  const parts = syntheticModel({ arch, seed: 3, dims: dimsFor(arch) });
  return loadHfModel(mapOpener(hfFiles(parts, dtype, shards)), { source: 'synthetic' });
}

async function loadGguf(arch: Arch, dtype: DType): Promise<ModelDesc> {
  const parts = syntheticModel({ arch, seed: 3, dims: dimsFor(arch) });
  return (await loadGgufModel(bytesSource('model.gguf', hfToGguf(parts, dtype)))).desc;
}

/** What each loaded tensor must decode to: the original values stored row-wise as `dtype`. */
function expectMatchesOriginal(arch: Arch, desc: ModelDesc, dtype: DType): void {
  const parts = syntheticModel({ arch, seed: 3, dims: dimsFor(arch) });
  expect([...desc.tensors.keys()].sort()).toEqual([...parts.tensors.keys()].sort());
  for (const [name, t] of desc.tensors) {
    const orig = parts.tensors.get(name)!;
    expect(t.shape, name).toEqual(orig.shape);
    const storedAs = orig.shape.length === 1 ? (dtype === 'f16' || dtype === 'bf16' ? t.dtype : 'f32') : dtype;
    expect(t.dtype, name).toBe(storedAs);
    const cols = orig.shape[orig.shape.length - 1];
    const want = dequantize({ ...t, data: encodeTensor(orig.values, cols, storedAs) });
    expectSame(dequantize(t), want, name);
  }
}

describe('HF safetensors round trip', () => {
  for (const arch of ARCHES) {
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      it(`${arch} ${dtype}`, async () => {
        const desc = await loadHf(arch, dtype);
        expect(desc.config.arch).toBe(arch);
        expect(desc.config.attentionBias).toBe(arch === 'qwen2');
        expect(desc.config.qkNorm).toBe(arch === 'qwen3');
        expect(desc.config.headDim).toBe(arch === 'qwen3' ? 128 : 64);
        expectMatchesOriginal(arch, desc, dtype);
      });
    }
  }

  it('loads a sharded checkpoint through its index like the single file', async () => {
    const sharded = await loadHf('llama', 'f32', 3);
    const single = await loadHf('llama', 'f32');
    expect(sharded.config).toEqual(single.config);
    for (const [name, t] of single.tensors) expectSame(sharded.tensors.get(name)!.data, t.data, name);
  });

  it('reports monotonic progress that ends at the total', async () => {
    const parts = syntheticModel({ arch: 'llama', seed: 3 });
    const seen: LoadProgress[] = [];
    await loadHfModel(mapOpener(hfFiles(parts, 'f32', 2)), { onProgress: (p) => seen.push(p) });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i].bytesDone).toBeGreaterThanOrEqual(seen[i - 1].bytesDone);
    expect(seen.at(-1)!.bytesDone).toBe(seen.at(-1)!.bytesTotal);
    expect(seen.at(-1)!.bytesTotal).toBeGreaterThan(4_000_000);
  });
});

describe('GGUF round trip', () => {
  for (const arch of ARCHES) {
    for (const dtype of GGUF_DTYPES) {
      it(`${arch} ${dtype}`, async () => {
        const desc = await loadGguf(arch, dtype);
        expectMatchesOriginal(arch, desc, dtype);
      });
    }
  }

  for (const arch of ARCHES) {
    it(`${arch}: HF and GGUF copies load to the same config and identical tensors`, async () => {
      const hf = await loadHf(arch, 'f32');
      const gg = await loadGguf(arch, 'f32');
      expect(gg.config).toEqual(hf.config);
      for (const [name, t] of hf.tensors) expectSame(dequantize(gg.tensors.get(name)!), dequantize(t), name);
    });
  }

  it('stores llama Q/K rows permuted (qwen rows as-is) yet loads them in HF order', async () => {
    for (const arch of ['llama', 'qwen2'] as Arch[]) {
      const parts = syntheticModel({ arch, seed: 3 });
      const bytes = hfToGguf(parts, 'f32');
      const header = await readGgufHeader(bytesSource('model.gguf', bytes));
      const info = header.tensors.find((t) => t.name === 'blk.0.attn_k.weight')!;
      const rowBytes = 256 * 4;
      const stored = bytes.subarray(header.dataOffset + info.offset, header.dataOffset + info.offset + 128 * rowBytes);
      const hfRows = new Uint8Array(parts.tensors.get('model.layers.0.self_attn.k_proj.weight')!.values.buffer);
      // GGUF row 1 holds HF row headDim/2 = 32 for llama; qwen keeps HF order.
      const hfRow = arch === 'llama' ? 32 : 1;
      expectSame(stored.subarray(rowBytes, 2 * rowBytes), hfRows.subarray(hfRow * rowBytes, (hfRow + 1) * rowBytes), arch);
    }
  });

  it('drops lm_head and reports tied embeddings when the model ties them', async () => {
    const parts = syntheticModel({ arch: 'qwen3', seed: 5, tieWordEmbeddings: true });
    const hf = await loadHfModel(mapOpener(hfFiles(parts, 'bf16')));
    const gg = (await loadGgufModel(bytesSource('m.gguf', hfToGguf(parts, 'q8_0')))).desc;
    for (const desc of [hf, gg]) {
      expect(desc.config.tieWordEmbeddings).toBe(true);
      expect(desc.tensors.has('lm_head.weight')).toBe(false);
    }
  });

  it('carries Llama-3 rope scaling through config.json and GGUF rope_freqs', async () => {
    const parts = syntheticModel({ arch: 'llama', seed: 2 });
    parts.config.rope_theta = 500000;
    parts.config.rope_scaling = { rope_type: 'llama3', factor: 32, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
    const hf = await loadHfModel(mapOpener(hfFiles(parts, 'f32')));
    expect(hf.config.ropeScaling).toEqual({ type: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
    const gg = (await loadGgufModel(bytesSource('m.gguf', hfToGguf(parts, 'f32')))).desc;
    expect(gg.config.ropeScaling?.factor).toBe(32);
    const want = llama3RopeFactors(hf.config)!;
    const got = llama3RopeFactors(gg.config)!;
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i], 4);
    // Same model, same config apart from how the scaling is parameterized.
    expect({ ...gg.config, ropeScaling: null }).toEqual({ ...hf.config, ropeScaling: null });
  });

  it('reads the vocabulary keys llama.cpp needs', async () => {
    const bytes = hfToGguf(syntheticModel({ arch: 'llama', seed: 1 }), 'q8_0');
    const { header } = await loadGgufModel(bytesSource('m.gguf', bytes));
    const m = header.metadata;
    expect(m.get('tokenizer.ggml.model')).toBe('gpt2');
    expect((m.get('tokenizer.ggml.tokens') as string[]).slice(256)).toEqual(['<|endoftext|>', '<|im_start|>', '<|im_end|>']);
    expect((m.get('tokenizer.ggml.tokens') as string[])[32]).toBe('Ġ');
    expect((m.get('tokenizer.ggml.token_type') as number[]).slice(254)).toEqual([1, 1, 3, 3, 3]);
    expect(m.get('tokenizer.ggml.merges')).toEqual([]);
    expect([m.get('tokenizer.ggml.bos_token_id'), m.get('tokenizer.ggml.eos_token_id'), m.get('tokenizer.ggml.padding_token_id')]).toEqual([256, 258, 256]);
    expect(m.get('tokenizer.ggml.add_bos_token')).toBe(false);
    expect(m.get('tokenizer.chat_template')).toContain('<|im_start|>');
    expect(m.get('llama.rope.dimension_count')).toBe(64);
  });

  it('parses HF config defaults: GQA from num_key_value_heads, head_dim from hidden / heads', () => {
    const c = configFromHf('config.json', {
      model_type: 'llama', vocab_size: 32000, hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 22,
      num_attention_heads: 32, num_key_value_heads: 4, rms_norm_eps: 1e-5, bos_token_id: 1, eos_token_id: [2, 3],
    });
    expect([c.headDim, c.numKvHeads, c.ropeTheta, c.maxPositionEmbeddings, c.tieWordEmbeddings]).toEqual([64, 4, 10000, 2048, false]);
    expect(c.eosTokenIds).toEqual([2, 3]);
  });
});
