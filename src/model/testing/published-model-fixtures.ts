// Random-weight models at a published vocabulary size with the published tokenizer files, written as a
// Hugging Face folder (with generation_config.json) and as a GGUF through the exporter. Tests only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Arch } from '../desc';
import { hfToGguf, type HfModelParts } from '../../../tools/models/hf-to-gguf';
import { hfFiles, syntheticModel } from './synthetic-model-fixtures';
import { publishedTokenizerFiles, type PublishedTokenizer } from './published-tokenizer-fixtures';

/** Small enough for the CPU reference at a 262k vocabulary (its embedding alone is 64 MiB in f32). */
const DIMS = { hidden: 64, intermediate: 128, layers: 2, heads: 2, kvHeads: 1, headDim: 32 };

/** The model's parts: `arch` (default the family's) at the family's vocabulary size, its tokenizer files and ids. */
export function publishedModelParts(published: PublishedTokenizer, arch: Arch = published.arch, seed = 3): HfModelParts {
  // gemma ties its embeddings, as the published checkpoints do; the others keep an lm_head
  const tied = arch === 'gemma2' || arch === 'gemma3';
  const parts = syntheticModel({ arch, seed, tieWordEmbeddings: tied, dims: { ...DIMS, vocab: published.rows } });
  const files = publishedTokenizerFiles(published.family);
  const model = files.tokenizer.model as { vocab: Record<string, number> };
  const added = files.tokenizer.added_tokens as Array<{ id: number; content: string }>;
  const idOf = (key: string): number | null => {
    const value = files.tokenizerConfig[key];
    const content = typeof value === 'string' ? value : (value as { content?: string } | null)?.content;
    if (typeof content !== 'string') return null;
    return added.find((t) => t.content === content)?.id ?? model.vocab[content] ?? null;
  };
  Object.assign(parts.config, { bos_token_id: idOf('bos_token'), eos_token_id: published.generationEos ?? idOf('eos_token') });
  return { ...parts, tokenizer: files.tokenizer, tokenizerConfig: files.tokenizerConfig, name: `${arch}-${published.family}-tokenizer` };
}

/** Writes `parts` as an f32 HF folder (plus generation_config.json) under dir/hf and an f32 GGUF at dir/model.gguf. */
export function writePublishedModel(parts: HfModelParts, generationEos: number[] | null, dir: string): { hfDir: string; ggufPath: string } {
  const hfDir = join(dir, 'hf');
  mkdirSync(hfDir, { recursive: true });
  for (const [name, bytes] of hfFiles(parts, 'f32')) writeFileSync(join(hfDir, name), bytes);
  if (generationEos) writeFileSync(join(hfDir, 'generation_config.json'), JSON.stringify({ bos_token_id: parts.config.bos_token_id, eos_token_id: generationEos }));
  const ggufPath = join(dir, 'model.gguf');
  writeFileSync(ggufPath, hfToGguf(parts, 'f32'));
  return { hfDir, ggufPath };
}
