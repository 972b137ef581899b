// Tests for the suggested Hub models: each is a loadable source, and its weights URL is the one
// the worker caches, so "downloaded" is shown for the right entry.
import { describe, expect, it } from 'vitest';
import { isRepoId } from '../../protocol/model-source';
import { isSuggestionCached, SUGGESTED_MODELS, suggestionSource, suggestionWeightsUrl } from './suggested-models';

describe('SUGGESTED_MODELS', () => {
  it('names valid repos, .gguf files where there are files, and a size and quant for each', () => {
    expect(new Set(SUGGESTED_MODELS.map((m) => m.id)).size).toBe(SUGGESTED_MODELS.length);
    for (const m of SUGGESTED_MODELS) {
      expect(isRepoId(m.repoId)).toBe(true);
      if (m.file) expect(m.file.toLowerCase().endsWith('.gguf')).toBe(true);
      expect(m.approxBytes).toBeGreaterThan(1e8);
      expect(m.quant).not.toBe('');
    }
    // Smallest first.
    expect(SUGGESTED_MODELS[0].label).toBe('SmolLM2-135M-Instruct');
  });

  it('loads a GGUF by its file and a safetensors repo by its HF layout', () => {
    const gguf = SUGGESTED_MODELS.find((m) => m.id === 'qwen25-05b-q8_0')!;
    expect(suggestionSource(gguf)).toEqual({ kind: 'huggingface', repoId: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', file: 'qwen2.5-0.5b-instruct-q8_0.gguf' });
    expect(suggestionSource(SUGGESTED_MODELS[0])).toEqual({ kind: 'huggingface', repoId: 'HuggingFaceTB/SmolLM2-135M-Instruct' });
  });

  it('knows a model is downloaded from its weights URL in the cache', () => {
    const gguf = SUGGESTED_MODELS.find((m) => m.id === 'qwen25-05b-q8_0')!;
    const url = suggestionWeightsUrl(gguf);
    expect(url).toBe('https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q8_0.gguf');
    expect(isSuggestionCached(gguf, new Set([url]))).toBe(true);
    expect(isSuggestionCached(SUGGESTED_MODELS[0], new Set([url]))).toBe(false);
    expect(suggestionWeightsUrl(SUGGESTED_MODELS[0])).toBe('https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/resolve/main/model.safetensors');
  });
});
