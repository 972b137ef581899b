// gemma2 and gemma3 through both loaders: HF config fields and GGUF keys to the same ModelConfig,
// norms as their (1 + w) multipliers, gemma3's vision-wrapped layout. Not the math (src/reference).
import { describe, expect, it } from 'vitest';
import type { ModelDesc } from './desc';
import { bytesSource, mapOpener } from './byte-source';
import { loadHfModel } from './hf-loader';
import { loadGgufModel } from './gguf-loader';
import { configFromHf, slidingLayers } from './hf-config';
import { dequantize } from '../reference/dequant';
import { hfFiles, syntheticModel, SYNTH_SLIDING_WINDOW } from './testing/synthetic-model-fixtures';
import { hfToGguf } from '../../tools/models/hf-to-gguf';
import { MODEL_SHAPES } from '../../tools/models/published-shapes';

const loadHf = (arch: 'gemma2' | 'gemma3', dtype: 'f32' | 'bf16' = 'f32'): Promise<ModelDesc> =>
  loadHfModel(mapOpener(hfFiles(syntheticModel({ arch, seed: 4, tieWordEmbeddings: true }), dtype)));
const loadGguf = async (arch: 'gemma2' | 'gemma3', dtype: 'f32' | 'q8_0' = 'f32'): Promise<ModelDesc> =>
  (await loadGgufModel(bytesSource('m.gguf', hfToGguf(syntheticModel({ arch, seed: 4, tieWordEmbeddings: true }), dtype)))).desc;

describe.each(['gemma2', 'gemma3'] as const)('%s', (arch) => {
  it('reads the same config from config.json and from GGUF keys', async () => {
    const hf = await loadHf(arch);
    const gg = await loadGguf(arch);
    expect(gg.config).toEqual(hf.config);
    const c = hf.config;
    expect(c.arch).toBe(arch);
    expect([c.embedScale, c.mlpActivation, c.postNorms, c.tieWordEmbeddings, c.qkNorm]).toEqual([16, 'gelu_tanh', true, true, arch === 'gemma3']);
    expect(c.attentionScale).toBe(1 / 8); // 1 / sqrt(query_pre_attn_scalar = head_dim 64)
    expect(c.layerWindows).toEqual([SYNTH_SLIDING_WINDOW, 0]);
    if (arch === 'gemma2') expect([c.attnLogitSoftcap, c.finalLogitSoftcap, c.slidingRopeTheta, c.ropeScaling]).toEqual([4, 8, null, null]);
    else expect([c.attnLogitSoftcap, c.finalLogitSoftcap, c.slidingRopeTheta, c.ropeTheta, c.ropeScaling]).toEqual([0, 0, 10000, 1000000, { type: 'linear', factor: 8 }]);
    expect(hf.tensors.has('lm_head.weight') || gg.tensors.has('lm_head.weight')).toBe(false);
  });

  it('hands runners each norm as its multiplier 1 + w, from HF (f32 and bf16) and GGUF alike', async () => {
    const parts = syntheticModel({ arch, seed: 4, tieWordEmbeddings: true });
    const names = [...parts.tensors.keys()].filter((n) => n.endsWith('norm.weight'));
    expect(names).toContain('model.layers.0.pre_feedforward_layernorm.weight');
    expect(names).toContain('model.layers.1.post_feedforward_layernorm.weight');
    for (const desc of [await loadHf(arch), await loadGguf(arch, 'q8_0')]) {
      for (const name of names) {
        const want = parts.tensors.get(name)!.values.map((w) => 1 + w);
        expect(Array.from(dequantize(desc.tensors.get(name)!)), name).toEqual(Array.from(want));
      }
    }
    const bf16 = await loadHf(arch, 'bf16');
    const norm = dequantize(bf16.tensors.get('model.norm.weight')!);
    const orig = parts.tensors.get('model.norm.weight')!.values;
    norm.forEach((m, i) => expect(Math.abs(m - (1 + orig[i]!))).toBeLessThan(4e-3)); // bf16's 8 bits of w
    // a matrix is not shifted
    expect(dequantize(bf16.tensors.get('model.layers.0.mlp.up_proj.weight')!)[0]).toBeCloseTo(parts.tensors.get('model.layers.0.mlp.up_proj.weight')!.values[0]!, 2);
  });
});

describe('gemma configs as published', () => {
  it('slides gemma2 every other layer and gemma3 all but every sixth, as llama.cpp and transformers do', () => {
    expect(slidingLayers(4, 2)).toEqual([true, false, true, false]);
    expect(slidingLayers(12, 6)).toEqual([true, true, true, true, true, false, true, true, true, true, true, false]);
    const g = MODEL_SHAPES['Gemma-3-1B']!;
    expect(g.layerWindows.filter((w) => w === 0)).toHaveLength(4); // layers 5, 11, 17, 23 of 26
    expect(g.layerWindows[5]).toBe(0);
    expect(g.layerWindows[0]).toBe(512);
    expect([g.headDim, g.numKvHeads, g.attentionScale, g.slidingRopeTheta]).toEqual([256, 1, 1 / 16, 10000]);
  });

  it('follows layer_types where a config lists them', () => {
    const raw = {
      model_type: 'gemma3_text', vocab_size: 64, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 3, num_attention_heads: 2,
      num_key_value_heads: 1, head_dim: 16, sliding_window: 8, layer_types: ['full_attention', 'sliding_attention', 'full_attention'],
    };
    expect(configFromHf('config.json', raw).layerWindows).toEqual([0, 8, 0]);
    expect(() => configFromHf('config.json', { ...raw, layer_types: ['full_attention'] })).toThrow(/"layer_types" has 1 entries for 3 layers/);
  });

  it('loads gemma3 with vision: text_config and language_model.* tensors, vision tensors dropped', async () => {
    const parts = syntheticModel({ arch: 'gemma3', seed: 4, tieWordEmbeddings: true });
    const files = hfFiles(parts, 'f32');
    const text = await loadHfModel(mapOpener(files));
    const { model_type: _, architectures: __, ...textConfig } = parts.config;
    const wrapped = { ...parts, config: { model_type: 'gemma3', architectures: ['Gemma3ForConditionalGeneration'], text_config: { ...textConfig, model_type: 'gemma3_text' } } };
    wrapped.tensors = new Map([...parts.tensors].map(([name, t]) => [`language_model.${name}`, t]));
    wrapped.tensors.set('vision_tower.vision_model.embeddings.patch_embedding.weight', { shape: [4, 4], values: new Float32Array(16) });
    const vision = await loadHfModel(mapOpener(hfFiles(wrapped, 'f32')));
    expect(vision.config).toEqual(text.config);
    expect([...vision.tensors.keys()].sort()).toEqual([...text.tensors.keys()].sort());
  });

  it('names the architectures it runs when refusing another', () => {
    expect(() => configFromHf('config.json', { model_type: 'gemma4', hidden_size: 32 })).toThrow(/unsupported architecture "gemma4" \(supported: llama, qwen2, qwen3, gemma2, gemma3\)/);
  });
});
