// GGUF header reader over any ByteSource: metadata and tensor infos read front to back in
// pieces, every count, length and size bounded before it is trusted. Not tensor loading (gguf-loader.ts).
import type { ByteSource } from './byte-source';
import { ModelFormatError, check } from './errors';
import { MAX_VOCAB_ENTRIES } from './vocab-limits';

// Our own reader rather than @huggingface/gguf: that parser decodes strings from a buffer it
// grows in 2 MB pieces and silently cuts any string that crosses the buffer's end.

const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
/** A tensor info takes at least 24 bytes and a key/value pair 13: counts beyond size / that lie. */
const MIN_TENSOR_INFO_BYTES = 24;
const MIN_KV_BYTES = 13;
const MAX_TENSORS = 100_000;
const MAX_KVS = 100_000;
/** Real headers are a few MB (large vocabularies); the whole header is held while it is read. */
const MAX_HEADER_BYTES = 50_000_000;
/** Bytes fetched per read of the header (one HTTP range request for URL sources). */
const HEADER_READ_BYTES = 4 << 20;
/** Chat templates and licences are kilobytes; a longer metadata string is not one of them. */
export const MAX_METADATA_STRING_BYTES = 1 << 20;
/** The GGUF specification bounds keys at 65535 bytes. */
const MAX_KEY_BYTES = 65_535;
/** ggml's GGML_MAX_NAME (64, with the terminating NUL): llama.cpp refuses longer tensor names. */
const MAX_TENSOR_NAME_BYTES = 63;
/** ggml's GGML_MAX_DIMS. */
const MAX_TENSOR_DIMS = 4;
/** Metadata arrays are per-token tables (tokens, scores, types, merges): none outgrows a vocabulary. */
const MAX_METADATA_ARRAY_ENTRIES = MAX_VOCAB_ENTRIES;

export type GgufMetadataValue = number | bigint | boolean | string | GgufMetadataValue[];

export interface GgufTensorInfo {
  name: string;
  /** GGUF order: ne[0] (contiguous) first. */
  dims: number[];
  ggmlType: number;
  /** Offset relative to the data section. */
  offset: number;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufMetadataValue>;
  tensors: GgufTensorInfo[];
  /** Absolute offset of the data section. */
  dataOffset: number;
  alignment: number;
}

const STRING_TYPE = 8;
const ARRAY_TYPE = 9;
/** Bytes of each scalar GGUF value type, by type id (string and array have none). */
const SCALAR_BYTES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

// Exactly as stored: a default decoder strips a leading U+FEFF (six of Gemma's SentencePiece
// tokens begin with one, and would then collide with others) and replaces bad bytes with U+FFFD.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });

/** A cursor over the header that fetches more of the file only when a read needs it. */
class HeaderReader {
  private buf = new Uint8Array(0);
  private view = new DataView(this.buf.buffer);
  /** File offset of buf[0]. */
  private bufStart: number;
  /** File offset of the next byte to read. */
  pos: number;

  constructor(private readonly src: ByteSource, start: number) {
    this.bufStart = start;
    this.pos = start;
  }

  /** Makes the next n bytes readable; a header cut short or past the cap is an error. */
  async need(n: number): Promise<void> {
    const end = this.pos + n;
    const have = this.bufStart + this.buf.length;
    if (end <= have) return;
    const file = this.src.name;
    check(end <= this.src.size, file, `truncated: the header needs ${end} bytes but the file has ${this.src.size}`);
    check(end <= MAX_HEADER_BYTES, file, `the header runs past ${MAX_HEADER_BYTES} bytes, more than any real GGUF header`);
    const readEnd = Math.min(this.src.size, MAX_HEADER_BYTES, Math.max(end, this.pos + HEADER_READ_BYTES));
    const fresh = await this.src.read(have, readEnd - have);
    const next = new Uint8Array(readEnd - this.pos);
    next.set(this.buf.subarray(this.pos - this.bufStart));
    next.set(fresh, have - this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer);
    this.bufStart = this.pos;
  }

  /** One scalar of a type in SCALAR_BYTES; need() must have made its bytes readable. */
  scalar(type: number): number | bigint | boolean {
    const v = this.view;
    const at = this.pos - this.bufStart;
    this.pos += SCALAR_BYTES[type];
    switch (type) {
      case 0: return v.getUint8(at);
      case 1: return v.getInt8(at);
      case 2: return v.getUint16(at, true);
      case 3: return v.getInt16(at, true);
      case 4: return v.getUint32(at, true);
      case 5: return v.getInt32(at, true);
      case 6: return v.getFloat32(at, true);
      case 7: return v.getUint8(at) !== 0;
      case 10: return v.getBigUint64(at, true);
      case 11: return v.getBigInt64(at, true);
      default: return v.getFloat64(at, true);
    }
  }

  async u32(): Promise<number> {
    await this.need(4);
    return this.scalar(4) as number;
  }

  async u64(): Promise<bigint> {
    await this.need(8);
    return this.scalar(10) as bigint;
  }

  /** A length-prefixed string of at most maxBytes; `tooLong` words the error for a longer one. */
  async string(maxBytes: number, tooLong: (bytes: bigint) => string): Promise<string> {
    const length = await this.u64();
    check(length <= BigInt(maxBytes), this.src.name, tooLong(length));
    const n = Number(length);
    await this.need(n);
    const at = this.pos - this.bufStart;
    const start = this.pos;
    this.pos += n;
    try {
      return utf8.decode(this.buf.subarray(at, at + n));
    } catch {
      throw new ModelFormatError(this.src.name, `the ${n}-byte string at byte ${start} is not valid UTF-8`);
    }
  }
}

function toNumber(v: bigint | number): number {
  return typeof v === 'bigint' ? (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : Infinity) : v;
}

async function readValue(r: HeaderReader, file: string, key: string, type: number): Promise<GgufMetadataValue> {
  const longString = (what: string) => (bytes: bigint) =>
    `metadata "${key}" ${what}is a ${bytes}-byte string, longer than the ${MAX_METADATA_STRING_BYTES}-byte limit for metadata strings`;
  if (type === STRING_TYPE) return r.string(MAX_METADATA_STRING_BYTES, longString(''));
  if (type in SCALAR_BYTES) {
    await r.need(SCALAR_BYTES[type]);
    return r.scalar(type);
  }
  check(type === ARRAY_TYPE, file, `metadata "${key}" has unknown value type ${type}`);
  const itemType = await r.u32();
  check(itemType !== ARRAY_TYPE, file, `metadata "${key}" is an array of arrays, which GGUF readers do not support`);
  check(itemType === STRING_TYPE || itemType in SCALAR_BYTES, file, `metadata "${key}" is an array of unknown value type ${itemType}`);
  const count = await r.u64();
  check(count <= BigInt(MAX_METADATA_ARRAY_ENTRIES), file, `metadata "${key}" has ${count} entries, more than the limit of ${MAX_METADATA_ARRAY_ENTRIES}`);
  const n = Number(count);
  const items: GgufMetadataValue[] = [];
  if (itemType === STRING_TYPE) {
    for (let i = 0; i < n; i++) items.push(await r.string(MAX_METADATA_STRING_BYTES, longString(`entry ${i} `)));
  } else {
    // One need() for the whole array: a count the file cannot hold fails before anything grows.
    await r.need(n * SCALAR_BYTES[itemType]);
    for (let i = 0; i < n; i++) items.push(r.scalar(itemType));
  }
  return items;
}

export async function readGgufHeader(src: ByteSource): Promise<GgufHeader> {
  const file = src.name;
  check(src.size >= 24, file, `truncated: ${src.size} bytes is too short for a GGUF header`);
  const head = await src.read(0, 24);
  const view = new DataView(head.buffer, head.byteOffset, 24);
  check(view.getUint32(0, true) === GGUF_MAGIC, file, 'not a GGUF file (wrong magic number)');
  const version = view.getUint32(4, true);
  check(version === 2 || version === 3, file, `unsupported GGUF version ${version} (supported: 2, 3; big-endian files are not supported)`);
  const numTensors = view.getBigUint64(8, true);
  const numKvs = view.getBigUint64(16, true);
  check(numTensors <= BigInt(Math.min(MAX_TENSORS, Math.floor(src.size / MIN_TENSOR_INFO_BYTES))), file, `tensor count ${numTensors} is impossible for a ${src.size}-byte file`);
  check(numKvs <= BigInt(Math.min(MAX_KVS, Math.floor(src.size / MIN_KV_BYTES))), file, `metadata count ${numKvs} is impossible for a ${src.size}-byte file`);

  const r = new HeaderReader(src, 24);
  const metadata = new Map<string, GgufMetadataValue>();
  for (let i = 0; i < Number(numKvs); i++) {
    const key = await r.string(MAX_KEY_BYTES, (bytes) => `metadata key ${i} is ${bytes} bytes long, more than the ${MAX_KEY_BYTES} bytes GGUF allows`);
    check(!metadata.has(key), file, `metadata key "${key}" appears twice`);
    metadata.set(key, await readValue(r, file, key, await r.u32()));
  }

  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < Number(numTensors); i++) {
    const name = await r.string(MAX_TENSOR_NAME_BYTES, (bytes) => `tensor ${i} has a ${bytes}-byte name, longer than the ${MAX_TENSOR_NAME_BYTES} bytes ggml allows`);
    const numDims = await r.u32();
    check(numDims <= MAX_TENSOR_DIMS, file, `tensor "${name}" has ${numDims} dimensions (at most ${MAX_TENSOR_DIMS})`);
    const dims: number[] = [];
    for (let d = 0; d < numDims; d++) dims.push(toNumber(await r.u64()));
    const ggmlType = await r.u32();
    const offset = toNumber(await r.u64());
    tensors.push({ name, dims, ggmlType, offset });
  }

  const alignmentValue = metadata.get('general.alignment') ?? 32;
  const alignment = typeof alignmentValue === 'number' || typeof alignmentValue === 'bigint' ? toNumber(alignmentValue) : NaN;
  check(Number.isInteger(alignment) && alignment >= 1 && alignment <= 1 << 20 && (alignment & (alignment - 1)) === 0, file, `general.alignment ${String(alignmentValue)} is not a power of two`);
  const dataOffset = Math.ceil(r.pos / alignment) * alignment;
  return { version, metadata, tensors, dataOffset, alignment };
}
