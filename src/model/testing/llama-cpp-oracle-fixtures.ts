// llama.cpp (node-llama-cpp) as the tokenizer and template oracle for model tests: the CPU binding, vocab-only GGUF loads, Jinja rendering.
// Test-only; product code never imports it. Not the engine's forward oracle (src/reference/llama-cpp holds that).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from 'node-llama-cpp';
import { f32, str, u32, writeGguf, type GgufValue } from '../../../tools/models/gguf-writer';

/** The CPU build, or null where this platform has no native build (then there is nothing to compare against). */
export async function oracleLlama(): Promise<Llama | null> {
  return getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.disabled }).catch(() => null);
}

/** llama hyperparameters llama.cpp reads even for a vocab-only load. */
export const VOCAB_ONLY_HPARAMS: ReadonlyArray<[string, GgufValue]> = [
  ['general.architecture', str('llama')],
  ['llama.context_length', u32(256)],
  ['llama.embedding_length', u32(16)],
  ['llama.block_count', u32(1)],
  ['llama.feed_forward_length', u32(32)],
  ['llama.attention.head_count', u32(2)],
  ['llama.attention.head_count_kv', u32(2)],
  ['llama.rope.dimension_count', u32(8)],
  ['llama.attention.layer_norm_rms_epsilon', f32(1e-5)],
];

/** Writes `entries` (tokenizer keys) as `dir/name.gguf` with the hyperparameters above and loads it vocab-only. */
export async function loadVocabOnly(llama: Llama, dir: string, name: string, entries: Array<[string, GgufValue]>): Promise<LlamaModel> {
  const path = join(dir, `${name}.gguf`);
  writeFileSync(path, writeGguf([...VOCAB_ONLY_HPARAMS, ...entries], []));
  return llama.loadModel({ modelPath: path, vocabOnly: true });
}

export const tokenIds = (tokens: readonly Token[]): number[] => tokens.map(Number);

/** llama.cpp's own Jinja engine (common/jinja, as its server renders templates), through node-llama-cpp's binding. */
export function llamaCppRender(llama: Llama, template: string, variables: Record<string, unknown>): string {
  const bindings = (llama as unknown as { _bindings: { AddonJinjaRenderer: new (t: string) => { render(v: Record<string, unknown>): string } } })._bindings;
  return new bindings.AddonJinjaRenderer(template).render(variables);
}
