// Loads a Hugging Face model folder (config.json + model.safetensors or a sharded index)
// into a ModelDesc. Not the tokenizer or chat template (their files are only required here).
import type { ModelConfig, ModelDesc, TensorDesc } from './desc';
import type { FileOpener, ProgressCallback } from './byte-source';
import { progressCounter, readJson } from './byte-source';
import { configFromHf } from './hf-config';
import { checkTensors } from './expected-tensors';
import { normsAsMultipliers } from './norm-multipliers';
import { readSafetensors, readSafetensorsHeader, type SafetensorsHeader } from './safetensors';
import type { ByteSource } from './byte-source';
import { ModelFormatError, check } from './errors';

const MAX_JSON_BYTES = 50 << 20;
const MAX_SHARDS = 10_000;

export interface HfLoadOptions {
  /** Folder, repo or URL name for ModelDesc.source and messages. */
  source?: string;
  onProgress?: ProgressCallback;
}

async function openRequired(open: FileOpener, name: string): Promise<ByteSource> {
  const src = await open(name);
  if (!src) throw new ModelFormatError(name, 'missing from the model folder');
  return src;
}

/** Shard file names from model.safetensors.index.json, each checked to be a plain file name. */
function shardNames(file: string, index: unknown): string[] {
  check(index !== null && typeof index === 'object', file, 'index is not a JSON object');
  const map = (index as { weight_map?: unknown }).weight_map;
  check(map !== null && typeof map === 'object' && !Array.isArray(map), file, 'index has no "weight_map" object');
  const names = [...new Set(Object.values(map as Record<string, unknown>))];
  check(names.length >= 1 && names.length <= MAX_SHARDS, file, `index names ${names.length} shard files`);
  for (const n of names) {
    check(typeof n === 'string' && /^[\w.-]+\.safetensors$/.test(n) && !n.startsWith('.'), file, `invalid shard file name ${JSON.stringify(n)}`);
  }
  return names as string[];
}

/** gemma3 with vision keeps its language model under language_model.model.*: the same tensors as gemma3_text's model.*. */
function renamed(config: ModelConfig, found: Map<string, TensorDesc>): Map<string, TensorDesc> {
  if (config.arch !== 'gemma3' || found.has('model.embed_tokens.weight')) return found;
  const out = new Map<string, TensorDesc>();
  for (const [name, t] of found) {
    const m = /^language_model\.(model\..+|lm_head\..+)$/.exec(name);
    if (m) out.set(m[1]!, { ...t, name: m[1]! });
  }
  return out;
}

export async function loadHfModel(open: FileOpener, options: HfLoadOptions = {}): Promise<ModelDesc> {
  const configSrc = await openRequired(open, 'config.json');
  const config = configFromHf(configSrc.name, await readJson(configSrc, MAX_JSON_BYTES));
  await openRequired(open, 'tokenizer.json');

  const indexSrc = await open('model.safetensors.index.json');
  const files = indexSrc ? shardNames(indexSrc.name, await readJson(indexSrc, MAX_JSON_BYTES)) : ['model.safetensors'];
  const shards: Array<{ src: ByteSource; header: SafetensorsHeader }> = [];
  for (const name of files) {
    const src = await openRequired(open, name);
    shards.push({ src, header: await readSafetensorsHeader(src) });
  }
  const total = shards.reduce((a, s) => a + s.header.dataBytes, 0);
  const onChunk = progressCounter(total, options.onProgress);

  const found = new Map<string, TensorDesc>();
  for (const { src, header } of shards) {
    for (const t of await readSafetensors(src, header, onChunk)) {
      if (found.has(t.name)) throw new ModelFormatError(src.name, `tensor "${t.name}" appears in more than one shard`);
      found.set(t.name, t);
    }
  }
  // Some checkpoints store lm_head even when tied; an untied config without it is an error.
  if (config.tieWordEmbeddings) found.delete('lm_head.weight');
  const weightsName = indexSrc ? indexSrc.name : shards[0].src.name;
  const tensors = normsAsMultipliers(weightsName, config, checkTensors(weightsName, config, renamed(config, found)));
  return { config, tensors, source: options.source ?? weightsName };
}
