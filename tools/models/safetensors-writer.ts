// safetensors writer: JSON header (padded to 8 bytes) then raw little-endian tensor bytes.
// Also the sharded-index JSON. Not a reader; f32/f16/bf16 only, like the loader.
import type { DType } from '../../src/model/desc';

export interface SafetensorsInput {
  name: string;
  dtype: 'f32' | 'f16' | 'bf16';
  shape: number[];
  data: Uint8Array;
}

const ST_DTYPE: Partial<Record<DType, string>> = { f32: 'F32', f16: 'F16', bf16: 'BF16' };

export function writeSafetensors(tensors: readonly SafetensorsInput[], metadata: Record<string, string> = { format: 'pt' }): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: ST_DTYPE[t.dtype], shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (new TextEncoder().encode(json).length % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let pos = 8 + headerBytes.length;
  for (const t of tensors) {
    out.set(t.data, pos);
    pos += t.data.length;
  }
  return out;
}

/** model.safetensors.index.json content for tensors split across shard files. */
export function safetensorsIndex(weightMap: Record<string, string>, totalSize: number): string {
  return JSON.stringify({ metadata: { total_size: totalSize }, weight_map: weightMap }, null, 2);
}
