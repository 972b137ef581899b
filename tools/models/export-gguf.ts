// CLI: converts a Hugging Face llama/qwen2/qwen3 folder to GGUF the way llama.cpp's
// convert_hf_to_gguf.py does. Usage: npx tsx tools/models/export-gguf.ts <hf-folder> <out.gguf> [--type T]
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { DType } from '../../src/model/desc';
import { loadHfModel } from '../../src/model/hf-loader';
import { dequantize } from '../../src/reference/dequant';
import { hfToGguf, type F32Tensor } from './hf-to-gguf';
import { folderOpener } from './node-files';

const TYPES: DType[] = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'];

function readJsonFile(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

/** Converts the folder and returns the GGUF bytes. */
export async function exportGguf(dir: string, dtype: DType): Promise<Uint8Array> {
  const desc = await loadHfModel(folderOpener(dir), { source: dir });
  const tensors = new Map<string, F32Tensor>();
  for (const [name, t] of desc.tensors) tensors.set(name, { shape: t.shape, values: dequantize(t) });
  const tcPath = join(dir, 'tokenizer_config.json');
  return hfToGguf(
    {
      config: readJsonFile(join(dir, 'config.json')),
      tensors,
      tokenizer: readJsonFile(join(dir, 'tokenizer.json')),
      tokenizerConfig: existsSync(tcPath) ? readJsonFile(tcPath) : null,
      name: basename(resolve(dir)),
    },
    dtype,
  );
}

async function main(argv: string[]): Promise<void> {
  const typeAt = argv.indexOf('--type');
  const dtype = (typeAt >= 0 ? argv[typeAt + 1] : 'f32') as DType;
  const positional = typeAt >= 0 ? argv.filter((_, i) => i !== typeAt && i !== typeAt + 1) : argv;
  if (positional.length !== 2 || !TYPES.includes(dtype)) {
    console.error(`usage: export-gguf <hf-folder> <out.gguf> [--type ${TYPES.join('|')}]`);
    process.exit(2);
  }
  const [dir, out] = positional;
  const bytes = await exportGguf(dir, dtype);
  writeFileSync(out, bytes);
  console.log(`wrote ${out} (${bytes.length} bytes, ${dtype})`);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
