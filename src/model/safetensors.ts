// safetensors reader: header parsing with sanity caps, then tensors as byte views of one
// read of the data section. Not sharding (see hf-loader.ts) and not dequantization.
import type { DType, TensorDesc } from './desc';
import type { ByteSource } from './byte-source';
import { readWithProgress } from './byte-source';
import { ModelFormatError, check } from './errors';
import { checkNoOverlap } from './tensor-ranges';

/** Headers beyond this are malformed (real ones are kilobytes to a few MB). */
export const MAX_SAFETENSORS_HEADER_BYTES = 100 << 20;
const MAX_TENSORS_PER_FILE = 100_000;
const MAX_DIM = 2 ** 31;

const DTYPES: Record<string, DType> = { F32: 'f32', F16: 'f16', BF16: 'bf16' };
const BYTES_PER_ELEM: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

export interface SafetensorsEntry {
  name: string;
  dtype: DType;
  shape: number[];
  /** Byte range relative to the data section. */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  entries: SafetensorsEntry[];
  /** Absolute offset of the data section (8 + header length). */
  dataOffset: number;
  /** Bytes of the data section the tensors span. */
  dataBytes: number;
}

export async function readSafetensorsHeader(src: ByteSource): Promise<SafetensorsHeader> {
  const file = src.name;
  check(src.size >= 8, file, `truncated: ${src.size} bytes, a safetensors file starts with an 8-byte header length`);
  const lenBytes = await src.read(0, 8);
  const headerLen = new DataView(lenBytes.buffer, lenBytes.byteOffset, 8).getBigUint64(0, true);
  check(headerLen >= 2n, file, `header length ${headerLen} is too small`);
  check(headerLen <= BigInt(MAX_SAFETENSORS_HEADER_BYTES), file, `header length ${headerLen} exceeds the ${MAX_SAFETENSORS_HEADER_BYTES}-byte limit`);
  const n = Number(headerLen);
  check(8 + n <= src.size, file, `header length ${n} runs past the end of the ${src.size}-byte file`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(await src.read(8, n)));
  } catch (e) {
    throw new ModelFormatError(file, `header is not valid JSON: ${(e as Error).message}`);
  }
  check(header !== null && typeof header === 'object' && !Array.isArray(header), file, 'header is not a JSON object');
  const names = Object.keys(header).filter((k) => k !== '__metadata__');
  check(names.length <= MAX_TENSORS_PER_FILE, file, `${names.length} tensors exceeds the limit of ${MAX_TENSORS_PER_FILE}`);
  const dataOffset = 8 + n;
  const dataSize = src.size - dataOffset;
  const entries: SafetensorsEntry[] = [];
  let dataBytes = 0;
  for (const name of names) {
    const e = (header as Record<string, unknown>)[name] as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    check(e && typeof e === 'object', file, `tensor "${name}" has no description`);
    check(typeof e.dtype === 'string', file, `tensor "${name}" has no dtype`);
    const dtype = DTYPES[e.dtype];
    check(dtype, file, `tensor "${name}" has unsupported dtype "${e.dtype}" (supported: F32, F16, BF16)`);
    check(Array.isArray(e.shape) && e.shape.length <= 8, file, `tensor "${name}" has an invalid shape`);
    const shape = e.shape as unknown[];
    check(shape.every((d) => Number.isInteger(d) && (d as number) >= 0 && (d as number) <= MAX_DIM), file, `tensor "${name}" has an invalid shape ${JSON.stringify(shape)}`);
    const offs = e.data_offsets;
    check(Array.isArray(offs) && offs.length === 2 && offs.every((o) => Number.isSafeInteger(o) && o >= 0), file, `tensor "${name}" has invalid data_offsets`);
    const [begin, end] = offs as [number, number];
    check(begin <= end, file, `tensor "${name}" data_offsets [${begin}, ${end}] are reversed`);
    check(end <= dataSize, file, `tensor "${name}" data [${begin}, ${end}) runs past the end of the data (${dataSize} bytes)`);
    const numElems = (shape as number[]).reduce((a, b) => a * b, 1);
    check(numElems * BYTES_PER_ELEM[e.dtype] === end - begin, file, `tensor "${name}" has ${end - begin} bytes but ${e.dtype} ${JSON.stringify(shape)} needs ${numElems * BYTES_PER_ELEM[e.dtype]}`);
    entries.push({ name, dtype, shape: shape as number[], begin, end });
    dataBytes = Math.max(dataBytes, end);
  }
  checkNoOverlap(file, entries.map((e) => ({ name: e.name, begin: dataOffset + e.begin, end: dataOffset + e.end })));
  return { entries, dataOffset, dataBytes };
}

/** Reads the tensors of one file; `wanted` filters by name (others are still skipped cheaply). */
export async function readSafetensors(
  src: ByteSource,
  header: SafetensorsHeader,
  onChunk?: (bytes: number) => void,
): Promise<TensorDesc[]> {
  const data = await readWithProgress(src, header.dataOffset, header.dataBytes, onChunk);
  return header.entries.map((e) => ({
    name: e.name,
    dtype: e.dtype,
    shape: e.shape.length === 0 ? [1] : e.shape,
    data: data.subarray(e.begin, e.end),
  }));
}
