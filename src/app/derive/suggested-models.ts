// Hugging Face models that run in Cohort (llama / qwen2 / gemma3 architectures, formats its loaders read),
// with their quant and download size, and where their weights land in the download cache. Data
// and pure helpers only; model/SuggestedModels.tsx shows them and loads one on a click.
import type { ModelSource } from '../../protocol/api';
import { HF_BASE } from '../../protocol/model-source';

export interface SuggestedModel {
  id: string;
  label: string;
  repoId: string;
  /** A .gguf file in the repo; none: the HF layout (config.json, tokenizer.json, model.safetensors). */
  file?: string;
  quant: string;
  /** Download size in bytes, approximate (the weights file; the small JSON files add little). */
  approxBytes: number;
  note: string;
}

const MB = 1e6;

/** Smallest first: the first one is the quickest way to a model that chats. */
export const SUGGESTED_MODELS: readonly SuggestedModel[] = [
  { id: 'smollm2-135m', label: 'SmolLM2-135M-Instruct', repoId: 'HuggingFaceTB/SmolLM2-135M-Instruct', quant: 'bf16 safetensors', approxBytes: 269 * MB, note: 'smallest that chats; short answers' },
  { id: 'gemma3-270m-q8_0', label: 'Gemma-3-270M-IT', repoId: 'unsloth/gemma-3-270m-it-GGUF', file: 'gemma-3-270m-it-Q8_0.gguf', quant: 'GGUF Q8_0', approxBytes: 292 * MB, note: 'gemma3: local layers keep a 512-token window' },
  { id: 'smollm2-360m', label: 'SmolLM2-360M-Instruct', repoId: 'HuggingFaceTB/SmolLM2-360M-Instruct', quant: 'bf16 safetensors', approxBytes: 724 * MB, note: 'better answers, still small' },
  { id: 'qwen25-05b-q4_0', label: 'Qwen2.5-0.5B-Instruct', repoId: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', file: 'qwen2.5-0.5b-instruct-q4_0.gguf', quant: 'GGUF q4_0', approxBytes: 429 * MB, note: 'multilingual; 4-bit weights' },
  { id: 'qwen25-05b-q8_0', label: 'Qwen2.5-0.5B-Instruct', repoId: 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', file: 'qwen2.5-0.5b-instruct-q8_0.gguf', quant: 'GGUF q8_0', approxBytes: 676 * MB, note: 'multilingual; 8-bit weights' },
  { id: 'llama32-1b-q4_0', label: 'Llama-3.2-1B-Instruct', repoId: 'bartowski/Llama-3.2-1B-Instruct-GGUF', file: 'Llama-3.2-1B-Instruct-Q4_0.gguf', quant: 'GGUF Q4_0', approxBytes: 771 * MB, note: 'the strongest here; slow on a software GPU' },
];

export function suggestionSource(model: SuggestedModel): ModelSource {
  return { kind: 'huggingface', repoId: model.repoId, ...(model.file ? { file: model.file } : {}) };
}

/** The weights file's URL as the worker fetches and caches it (open-source.ts builds the same). */
export function suggestionWeightsUrl(model: SuggestedModel): string {
  return `${HF_BASE}/${model.repoId}/resolve/main/${encodeURIComponent(model.file ?? 'model.safetensors')}`;
}

/** Whether the weights are already in the download cache (a load then needs no download). */
export function isSuggestionCached(model: SuggestedModel, cachedUrls: ReadonlySet<string>): boolean {
  return cachedUrls.has(suggestionWeightsUrl(model));
}
