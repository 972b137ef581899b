// A published shape (published-shapes.ts) as a GGUF file llama.cpp and Cohort both load: random q8_0/q4_0/q4_K
// matrices (q4_K rows that are not whole super-blocks in q4_0), the byte-level vocabulary padded to the shape's vocab size, written a tensor at a time. Not for reading outputs.
import { closeSync, openSync, writeSync } from 'node:fs';
import { expectedTensorShapes } from '../../src/model/expected-tensors';
import { ggufNameFromHf } from '../../src/model/gguf-config';
import { writeGgufHeader, type GgufTensorInfo } from './gguf-writer';
import { llama3RopeFactors, modelMetadata, vocabMetadata } from './hf-to-gguf';
import { MODEL_SHAPES, PUBLISHED_CONFIGS, randomMatrix, type RandomMatrixType } from './published-shapes';
import { canEncode, encodeTensor } from './quantize';
import { byteLevelTokenizer } from '../../src/model/testing/synthetic-model-fixtures';

const ALIGNMENT = 32;

/**
 * q4_K needs rows of whole 256-element super-blocks; where a shape's rows are not (SmolLM2's 576,
 * Qwen2.5-0.5B's 896, Gemma-3-1B's 1152) the matrix is q4_0, the same 4.5 bits per weight. llama.cpp's
 * quantizer falls back to q5_0 there, which Cohort does not load.
 */
export function matrixType(dtype: RandomMatrixType, cols: number): RandomMatrixType {
  return canEncode(dtype, cols) ? dtype : 'q4_0';
}

/**
 * Writes `path`; returns its size in bytes. Norms are 1 and biases 0 (as publishedShapeModel), the
 * vocabulary is `tokenizerFiles`' (default: 256 byte tokens and 3 specials), the rest unused padding (llama.cpp needs a token
 * string per embedding row). Weights are random, so the tokens sampled mean nothing: benches feed
 * them back and count a fixed number, never waiting for an end-of-turn token.
 */
export function writePublishedShapeGguf(
  path: string,
  shapeName: string,
  dtype: RandomMatrixType,
  seed = 1,
  tokenizerFiles: { tokenizer: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } = byteLevelTokenizer(),
): number {
  const config = MODEL_SHAPES[shapeName];
  const raw = PUBLISHED_CONFIGS[shapeName];
  if (!config || !raw) throw new Error(`unknown model shape ${shapeName}`);
  const { tokenizer, tokenizerConfig } = tokenizerFiles;
  const metadata = [
    ...modelMetadata(config, dtype, `${shapeName} shapes, random ${dtype}`),
    ...vocabMetadata({ config: raw, tensors: new Map(), tokenizer, tokenizerConfig }, config.vocabSize),
  ];
  // Each tensor's data is drawn when written, so a 1B model never sits in memory whole.
  const plan: Array<GgufTensorInfo & { data: () => Uint8Array }> = [];
  const factors = config.arch === 'llama' ? llama3RopeFactors(config) : null;
  if (factors) plan.push({ name: 'rope_freqs.weight', dtype: 'f32', shape: [factors.length], data: () => encodeTensor(factors, factors.length, 'f32') });
  let i = 0;
  for (const [name, shape] of expectedTensorShapes(config)) {
    const ggufName = ggufNameFromHf(name, config.arch);
    if (!ggufName) throw new Error(`no GGUF name for "${name}"`);
    const tensorSeed = seed * 7919 + ++i;
    if (shape.length === 2) {
      const type = matrixType(dtype, shape[1]!);
      plan.push({ name: ggufName, dtype: type, shape, data: () => randomMatrix(name, shape, type, tensorSeed).data });
    } else {
      const value = name.endsWith('.bias') ? 0 : 1;
      plan.push({ name: ggufName, dtype: 'f32', shape, data: () => new Uint8Array(new Float32Array(shape[0]!).fill(value).buffer) });
    }
  }
  const fd = openSync(path, 'w');
  try {
    let size = writeSync(fd, writeGgufHeader(metadata, plan, { alignment: ALIGNMENT }));
    for (const t of plan) {
      const data = t.data();
      size += writeSync(fd, data);
      const pad = (ALIGNMENT - (data.length % ALIGNMENT)) % ALIGNMENT;
      if (pad > 0) size += writeSync(fd, new Uint8Array(pad));
    }
    return size;
  } finally {
    closeSync(fd);
  }
}
