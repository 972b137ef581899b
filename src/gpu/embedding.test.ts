// Parity of shaders/embedding.wgsl with embeddingGather over a dequantized table, for every
// stored dtype, and with gemma's embedding scale. Runs on Node WebGPU; says nothing about speed.
import { describe, expect, it } from 'vitest';
import { encodeTensor } from '../../tools/models/quantize';
import type { DType, TensorDesc } from '../model/desc';
import { dequantize } from '../reference/dequant';
import { embeddingGather } from '../reference/ops';
import { runKernel } from './testing/kernel-harness';
import { DTYPE_CODE } from './kernels';
import { repackForGpu } from './repack';
import { TOKEN_INFO_WORDS } from './step-meta';
import { bits, scaledError, seededFloats } from './testing/test-util';

/** Decoding repeats ggml's products in the same order; only a fused multiply-add may differ. */
const EMBEDDING_TOLERANCE = 1e-6;

const DTYPES: DType[] = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'];

async function gatherOnGpu(table: TensorDesc, ids: number[], scale = 1): Promise<Float32Array> {
  const hidden = table.shape[1];
  const tokens = new Uint32Array(ids.length * TOKEN_INFO_WORDS); // [numTokens, TokenInfo]
  ids.forEach((id, t) => (tokens[t * TOKEN_INFO_WORDS] = id));
  // bound as the runner uploads it (q8_0 / q4_0 repacked into quant and scale planes)
  const stored = repackForGpu(table.data, table.dtype, table.shape[0]!, hidden!);
  const padded = new Uint8Array(Math.ceil(stored.byteLength / 4) * 4 + 4);
  padded.set(stored);
  const out = new Float32Array(ids.length * hidden); // [numTokens, hidden]
  const params = new Uint32Array([ids.length, hidden, 0, table.shape[0]!]);
  new Float32Array(params.buffer)[2] = scale;
  const result = await runKernel(
    'embedding',
    { DTYPE: DTYPE_CODE[table.dtype] },
    [params, tokens, padded, out],
    [Math.ceil(hidden / 64), ids.length],
    [3],
  );
  return new Float32Array(result.get(3)!);
}

describe('embedding.wgsl', () => {
  for (const dtype of DTYPES) {
    it(`${dtype}: gathers the rows embeddingGather gives`, async () => {
      const vocab = 9; // odd: q8_0/q4_0/q6_K rows start at alternating 2-byte alignments
      const hidden = dtype === 'q4_K' || dtype === 'q6_K' ? 512 : 96;
      const values = seededFloats(17, vocab * hidden, 0.5);
      const table: TensorDesc = { name: 'embed', dtype, shape: [vocab, hidden], data: encodeTensor(values, hidden, dtype) };
      const ids = [3, 0, 8, 3, 5, 1, 7];
      const gpu = await gatherOnGpu(table, ids);
      const cpu = new Float32Array(ids.length * hidden);
      embeddingGather({ rows: vocab, cols: hidden, data: dequantize(table) }, Int32Array.from(ids), cpu);
      if (dtype !== 'q4_K') expect(bits(gpu)).toEqual(bits(cpu));
      expect(scaledError(gpu, cpu)).toBeLessThanOrEqual(EMBEDDING_TOLERANCE);
    });
  }

  // gemma: rows times f32 sqrt(hidden), one rounding each, as the twin
  for (const dtype of ['f32', 'bf16', 'q8_0'] as DType[]) {
    it(`${dtype}: scales the rows as embeddingGather does, bit for bit`, async () => {
      const [vocab, hidden] = [9, 96];
      const table: TensorDesc = { name: 'embed', dtype, shape: [vocab, hidden], data: encodeTensor(seededFloats(18, vocab * hidden, 0.5), hidden, dtype) };
      const ids = [3, 0, 8, 3, 5];
      const scale = Math.fround(Math.sqrt(hidden));
      const cpu = new Float32Array(ids.length * hidden);
      embeddingGather({ rows: vocab, cols: hidden, data: dequantize(table) }, Int32Array.from(ids), cpu, scale);
      expect(bits(await gatherOnGpu(table, ids, scale))).toEqual(bits(cpu));
    });
  }
});
