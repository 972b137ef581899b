// Loads a GGUF file (llama, qwen2, qwen3, gemma2, gemma3) into a ModelDesc: HF tensor names, llama Q/K rows
// un-permuted to HF's rotary order, every offset and size checked. Not the vocabulary.
import type { DType, ModelDesc, TensorDesc } from './desc';
import type { ByteSource, ProgressCallback } from './byte-source';
import { progressCounter, readWithProgress } from './byte-source';
import { readGgufHeader, type GgufHeader } from './gguf';
import { configFromGguf, hfNameFromGguf, ropeScalingFromFactors } from './gguf-config';
import { checkTensors } from './expected-tensors';
import { BLOCK_LAYOUTS, dtypeFromGgmlId } from './quant-layout';
import { unpermuteRowsFromGguf } from './permute';
import { ModelFormatError, check } from './errors';
import { checkIdsFitEmbedding } from './vocab-limits';
import { checkNoOverlap } from './tensor-ranges';

const MAX_DIM = 2 ** 31;

export interface GgufLoadOptions {
  onProgress?: ProgressCallback;
}

export interface GgufModel {
  desc: ModelDesc;
  /** The parsed header, for the vocabulary and chat template (tokenizer.* keys). */
  header: GgufHeader;
}

interface Placed {
  name: string;
  dtype: DType;
  shape: number[];
  begin: number;
  end: number;
}

function placeTensors(file: string, h: GgufHeader, fileSize: number): Placed[] {
  const placed: Placed[] = [];
  for (const t of h.tensors) {
    const dtype = dtypeFromGgmlId(t.ggmlType);
    if (!dtype) throw new ModelFormatError(file, `tensor "${t.name}" has unsupported GGML type ${t.ggmlType} (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)`);
    check(t.dims.length >= 1 && t.dims.length <= 4, file, `tensor "${t.name}" has ${t.dims.length} dimensions`);
    check(t.dims.every((d) => Number.isInteger(d) && d >= 1 && d <= MAX_DIM), file, `tensor "${t.name}" has invalid dimensions ${JSON.stringify(t.dims)}`);
    // GGUF lists ne[0] (contiguous) first; HF shape is the reverse. Trailing 1s are dropped.
    const dims = [...t.dims];
    while (dims.length > 1 && dims[dims.length - 1] === 1) dims.pop();
    const shape = dims.reverse();
    const cols = shape[shape.length - 1];
    const { blockElems, blockBytes } = BLOCK_LAYOUTS[dtype];
    check(cols % blockElems === 0, file, `tensor "${t.name}" has rows of ${cols} elements, not whole ${dtype} blocks of ${blockElems}`);
    const numElems = shape.reduce((a, b) => a * b, 1);
    const bytes = (numElems / blockElems) * blockBytes;
    check(t.offset % h.alignment === 0, file, `tensor "${t.name}" offset ${t.offset} is not aligned to ${h.alignment}`);
    const begin = h.dataOffset + t.offset;
    check(Number.isSafeInteger(begin + bytes) && begin + bytes <= fileSize, file, `tensor "${t.name}" data [${begin}, ${begin + bytes}) runs past the end of the ${fileSize}-byte file`);
    placed.push({ name: t.name, dtype, shape, begin, end: begin + bytes });
  }
  checkNoOverlap(file, placed);
  return placed;
}

export async function loadGgufModel(src: ByteSource, options: GgufLoadOptions = {}): Promise<GgufModel> {
  const file = src.name;
  const header = await readGgufHeader(src);
  const placed = placeTensors(file, header, src.size);
  const tokens = header.metadata.get('tokenizer.ggml.tokens');
  check(Array.isArray(tokens) && tokens.length > 0, file, 'missing tokenizer: no "tokenizer.ggml.tokens" vocabulary');
  const embd = placed.find((p) => p.name === 'token_embd.weight');
  const config = configFromGguf(file, header.metadata, embd ? embd.shape[0] : tokens.length);
  // Token i of the vocabulary is id i, so ids past the embedding are the tokens past its rows.
  const idsPastRows = Array.from({ length: Math.max(0, tokens.length - config.vocabSize) }, (_, i) => config.vocabSize + i);
  checkIdsFitEmbedding(file, idsPastRows, config.vocabSize);

  const dataEnd = placed.reduce((a, p) => Math.max(a, p.end), header.dataOffset);
  const onChunk = progressCounter(dataEnd - header.dataOffset, options.onProgress);
  const data = await readWithProgress(src, header.dataOffset, dataEnd - header.dataOffset, onChunk);

  const found = new Map<string, TensorDesc>();
  let ropeFactors: Float32Array | null = null;
  for (const p of placed) {
    const bytes = data.subarray(p.begin - header.dataOffset, p.end - header.dataOffset);
    if (p.name === 'rope_freqs.weight' && p.dtype === 'f32') {
      ropeFactors = new Float32Array(bytes.slice().buffer);
      continue;
    }
    const name = hfNameFromGguf(p.name, config.arch);
    if (name === null) continue;
    check(!found.has(name), file, `tensor "${p.name}" appears twice`);
    let tensorData = bytes;
    // llama.cpp stores llama's Q/K rows interleaved for its RoPE; HF order pairs i with i+hd/2.
    if (config.arch === 'llama' && /\.self_attn\.[qk]_proj\.(weight|bias)$/.test(name)) {
      const numRows = p.shape[0];
      check(numRows % config.headDim === 0, file, `tensor "${p.name}" has ${numRows} rows, not whole heads of ${config.headDim}`);
      // A bias is a column of rows of one element, so the same reorder applies.
      tensorData = unpermuteRowsFromGguf(bytes, numRows, config.headDim);
    }
    found.set(name, { name, dtype: p.dtype, shape: p.shape, data: tensorData });
  }
  if (ropeFactors) {
    check(ropeFactors.length === config.headDim / 2, file, `rope_freqs.weight has ${ropeFactors.length} factors, expected ${config.headDim / 2}`);
    config.ropeScaling = ropeScalingFromFactors(ropeFactors, config.headDim, config.ropeTheta);
  }
  config.tieWordEmbeddings = !found.has('lm_head.weight');
  const tensors = checkTensors(file, config, found);
  return { desc: { config, tensors, source: file }, header };
}
