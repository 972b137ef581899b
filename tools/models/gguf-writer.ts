// GGUF v3 writer: typed metadata (every value type, arrays included), tensor infos and
// 32-byte aligned tensor data in one Uint8Array, or the header alone for writing a tensor at a time. Not a reader or quantizer.
import type { DType } from '../../src/model/desc';
import { GGML_TYPE_IDS, tensorBytes } from '../../src/model/quant-layout';

/** GGUF metadata value type ids. */
export const GGUF_VALUE_TYPES = {
  u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12,
} as const;
export type GgufScalarType = Exclude<keyof typeof GGUF_VALUE_TYPES, 'array'>;

export type GgufValue =
  | { type: Exclude<GgufScalarType, 'string' | 'bool' | 'u64' | 'i64'>; value: number }
  | { type: 'u64' | 'i64'; value: bigint | number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'array'; itemType: GgufScalarType; value: Array<number | bigint | boolean | string> };

export interface GgufTensorInput {
  name: string;
  dtype: DType;
  /** HF order: [rows, cols] (cols contiguous) or [n]; written to GGUF as ne = reversed. */
  shape: number[];
  data: Uint8Array;
}

export interface GgufWriteOptions {
  alignment?: number;
  /** For tests of readers: override the version field. */
  version?: number;
}

export const u32 = (value: number): GgufValue => ({ type: 'u32', value });
export const f32 = (value: number): GgufValue => ({ type: 'f32', value });
export const str = (value: string): GgufValue => ({ type: 'string', value });
export const bool = (value: boolean): GgufValue => ({ type: 'bool', value });
export const arr = (itemType: GgufScalarType, value: Array<number | bigint | boolean | string>): GgufValue => ({
  type: 'array', itemType, value,
});

class ByteWriter {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  scalar(type: GgufScalarType, v: number | bigint | boolean | string): void {
    const le = true;
    switch (type) {
      case 'u8': this.reserve(1); this.view.setUint8(this.length, Number(v)); this.length += 1; return;
      case 'i8': this.reserve(1); this.view.setInt8(this.length, Number(v)); this.length += 1; return;
      case 'bool': this.reserve(1); this.view.setUint8(this.length, v ? 1 : 0); this.length += 1; return;
      case 'u16': this.reserve(2); this.view.setUint16(this.length, Number(v), le); this.length += 2; return;
      case 'i16': this.reserve(2); this.view.setInt16(this.length, Number(v), le); this.length += 2; return;
      case 'u32': this.reserve(4); this.view.setUint32(this.length, Number(v), le); this.length += 4; return;
      case 'i32': this.reserve(4); this.view.setInt32(this.length, Number(v), le); this.length += 4; return;
      case 'f32': this.reserve(4); this.view.setFloat32(this.length, Number(v), le); this.length += 4; return;
      case 'u64': this.reserve(8); this.view.setBigUint64(this.length, BigInt(v), le); this.length += 8; return;
      case 'i64': this.reserve(8); this.view.setBigInt64(this.length, BigInt(v), le); this.length += 8; return;
      case 'f64': this.reserve(8); this.view.setFloat64(this.length, Number(v), le); this.length += 8; return;
      case 'string': {
        const bytes = new TextEncoder().encode(String(v));
        this.scalar('u64', bytes.length);
        this.bytes(bytes);
        return;
      }
    }
  }

  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  pad(alignment: number): void {
    const padded = Math.ceil(this.length / alignment) * alignment;
    this.reserve(padded - this.length);
    this.buf.fill(0, this.length, padded);
    this.length = padded;
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** A tensor's entry in the header: what its data will be, not the data. */
export type GgufTensorInfo = Omit<GgufTensorInput, 'data'>;

/**
 * The header alone (metadata, tensor infos), padded to the data section: a file is this followed by
 * each tensor's data padded to `alignment` in the same order. Lets large files be written a tensor at a time.
 */
export function writeGgufHeader(
  metadata: ReadonlyArray<[string, GgufValue]> | ReadonlyMap<string, GgufValue>,
  tensors: readonly GgufTensorInfo[],
  options: GgufWriteOptions = {},
): Uint8Array {
  const alignment = options.alignment ?? 32;
  const entries = [...metadata];
  const w = new ByteWriter();
  w.bytes(new TextEncoder().encode('GGUF'));
  w.scalar('u32', options.version ?? 3);
  w.scalar('u64', tensors.length);
  const hasAlignmentKey = entries.some(([k]) => k === 'general.alignment');
  w.scalar('u64', entries.length + (alignment !== 32 && !hasAlignmentKey ? 1 : 0));
  if (alignment !== 32 && !hasAlignmentKey) entries.push(['general.alignment', u32(alignment)]);
  for (const [key, v] of entries) {
    w.scalar('string', key);
    w.scalar('u32', GGUF_VALUE_TYPES[v.type]);
    if (v.type === 'array') {
      w.scalar('u32', GGUF_VALUE_TYPES[v.itemType]);
      w.scalar('u64', v.value.length);
      for (const item of v.value) w.scalar(v.itemType, item);
    } else {
      w.scalar(v.type, v.value);
    }
  }
  let offset = 0;
  for (const t of tensors) {
    w.scalar('string', t.name);
    w.scalar('u32', t.shape.length);
    for (const dim of [...t.shape].reverse()) w.scalar('u64', dim);
    w.scalar('u32', GGML_TYPE_IDS[t.dtype]);
    w.scalar('u64', offset);
    offset += Math.ceil(tensorBytes(t.dtype, t.shape) / alignment) * alignment;
  }
  w.pad(alignment);
  return w.result();
}

/** Serializes a complete GGUF file. Metadata keys keep insertion order. */
export function writeGguf(
  metadata: ReadonlyArray<[string, GgufValue]> | ReadonlyMap<string, GgufValue>,
  tensors: readonly GgufTensorInput[],
  options: GgufWriteOptions = {},
): Uint8Array {
  const alignment = options.alignment ?? 32;
  for (const t of tensors) {
    const expected = tensorBytes(t.dtype, t.shape);
    if (expected !== t.data.length) {
      throw new Error(`${t.name}: ${t.data.length} bytes but ${t.dtype} ${JSON.stringify(t.shape)} needs ${expected}`);
    }
  }
  const w = new ByteWriter();
  w.bytes(writeGgufHeader(metadata, tensors, options));
  for (const t of tensors) {
    w.bytes(t.data);
    w.pad(alignment);
  }
  return w.result();
}
