// llama.cpp's own KV cache size for a model shape and cache type: a synthetic GGUF of that attention
// shape (tools/models, random weights, tiny FFN and vocabulary) loaded by node-llama-cpp's prebuilt CPU
// build, a context of `cells` created with that K/V type, and the size its log reports read back.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getLlama, LlamaLogLevel, type Llama } from 'node-llama-cpp';
import type { KvCacheType } from '../src/model/kv-types';
import { hfToGguf } from '../tools/models/hf-to-gguf';
import { syntheticModel } from '../tools/models/synth';
import type { KvModelShape } from './capacity';

const GGML_NAMES: Record<KvCacheType, 'F32' | 'F16' | 'Q8_0'> = { f32: 'F32', f16: 'F16', q8_0: 'Q8_0' };

/**
 * "llama_kv_cache: size = 8.00 MiB (256 cells, 16 layers, 1/1 seqs), K (f16): 4.00 MiB, V (f16): 4.00 MiB"
 * (older builds: "llama_kv_cache_unified: ..."): K's and V's MiB, printed to two decimals.
 */
export function parseKvCacheLog(lines: readonly string[]): { cells: number; kMiB: number; vMiB: number; kType: string; vType: string } | null {
  for (const line of lines) {
    const m = /llama_kv_cache[\w]*:\s+size\s*=\s*[\d.]+ MiB \(\s*(\d+) cells.*K \((\w+)\):\s*([\d.]+) MiB, V \((\w+)\):\s*([\d.]+) MiB/.exec(line);
    if (m) return { cells: Number(m[1]), kType: m[2]!, kMiB: Number(m[3]), vType: m[4]!, vMiB: Number(m[5]) };
  }
  return null;
}

export class LlamaKvProbe {
  private constructor(
    private readonly llama: Llama,
    private readonly dir: string,
    /** Every line llama.cpp has logged (debug level): the KV cache's size is among them. */
    private readonly log: string[],
  ) {}

  static async start(): Promise<LlamaKvProbe> {
    const log: string[] = [];
    // the prebuilt CPU binary only: never download or compile
    const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.debug, logger: (_level, message) => void log.push(message), progressLogs: false });
    return new LlamaKvProbe(llama, mkdtempSync(join(tmpdir(), 'cohort-kv-')), log);
  }

  /**
   * Bytes a token of `shape` takes in llama.cpp's cache of `type`, from the K and V sizes it logs for
   * `cells` cells (two decimals of MiB: about 2^20 / 200 / cells bytes of rounding a token).
   */
  async bytesPerToken(shape: KvModelShape, types: readonly KvCacheType[], cells: number): Promise<Map<KvCacheType, number>> {
    // heads = KV heads (no grouping) so hidden = kvHeads * headDim stays small; the cache only sees n_head_kv, head_dim and n_layer
    const parts = syntheticModel({
      arch: 'llama',
      dims: { hidden: shape.numKvHeads * shape.headDim, intermediate: 64, layers: shape.numLayers, heads: shape.numKvHeads, kvHeads: shape.numKvHeads, headDim: shape.headDim, vocab: 259, maxPositions: Math.max(cells, 4096) },
    });
    const path = join(this.dir, `${shape.name}.gguf`);
    writeFileSync(path, hfToGguf(parts, 'f16'));
    const model = await this.llama.loadModel({ modelPath: path });
    const out = new Map<KvCacheType, number>();
    try {
      for (const type of types) {
        const start = this.log.length;
        // a quantized V cache needs flash attention in llama.cpp
        const context = await model.createContext({ contextSize: cells, batchSize: 256, threads: 1, flashAttention: type === 'q8_0', experimentalKvCacheKeyType: GGML_NAMES[type], experimentalKvCacheValueType: GGML_NAMES[type] });
        try {
          // llama.cpp's log reaches the logger on the event loop, sometimes after createContext resolves
          let found = parseKvCacheLog(this.log.slice(start));
          for (let i = 0; i < 100 && !found; i++) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            found = parseKvCacheLog(this.log.slice(start));
          }
          if (!found) throw new Error(`llama.cpp logged no KV cache size for ${shape.name} ${type}`);
          if (found.kType !== type || found.vType !== type) throw new Error(`llama.cpp made a ${found.kType}/${found.vType} cache, not ${type}`);
          out.set(type, ((found.kMiB + found.vMiB) * 2 ** 20) / found.cells);
        } finally {
          await context.dispose();
        }
      }
    } finally {
      await model.dispose();
    }
    return out;
  }

  async dispose(): Promise<void> {
    await this.llama.dispose();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
