// GGUF header reader over any ByteSource: @huggingface/gguf parses (fed by a Range fetch shim,
// so it runs in workers), our checks bound counts and sizes. Not tensor loading (gguf-loader.ts).
import { gguf } from '@huggingface/gguf';
import type { ByteSource } from './byte-source';
import { ModelFormatError, check } from './errors';

const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
/** A tensor info takes at least 24 bytes and a key/value pair 13: counts beyond size / that lie. */
const MIN_TENSOR_INFO_BYTES = 24;
const MIN_KV_BYTES = 13;
const MAX_TENSORS = 100_000;
const MAX_KVS = 100_000;
/** @huggingface/gguf keeps the header in one buffer capped at 50 MB. */
const MAX_HEADER_BYTES = 50_000_000;

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

/** A fetch that serves `bytes=a-b` ranges from src, as @huggingface/gguf expects of servers. */
function rangeFetch(src: ByteSource): typeof fetch {
  return (async (_input: unknown, init?: RequestInit) => {
    const range = new Headers(init?.headers).get('range') ?? '';
    const m = /bytes=(\d+)-(\d+)/.exec(range);
    if (!m) throw new ModelFormatError(src.name, 'internal: GGUF parser read without a byte range');
    const begin = Math.min(Number(m[1]), src.size);
    const end = Math.min(Number(m[2]) + 1, src.size, MAX_HEADER_BYTES);
    const bytes = end > begin ? await src.read(begin, end - begin) : new Uint8Array(0);
    return new Response(bytes.slice(), {
      status: 206,
      headers: { 'content-range': `bytes ${begin}-${Math.max(begin, end - 1)}/${src.size}` },
    });
  }) as typeof fetch;
}

function toNumber(v: bigint | number): number {
  return typeof v === 'bigint' ? (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : Infinity) : v;
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

  let parsed: Awaited<ReturnType<typeof gguf>>;
  try {
    parsed = await gguf(`https://gguf.invalid/${encodeURIComponent(file)}`, { fetch: rangeFetch(src) });
  } catch (e) {
    if (e instanceof ModelFormatError) throw e;
    throw new ModelFormatError(file, `malformed GGUF header: ${(e as Error).message}`);
  }
  check(parsed.littleEndian, file, 'big-endian GGUF files are not supported');
  const [, infoEnd] = parsed.tensorInfoByteRange;
  // The parser zero-fills reads past the end, so a header cut short shows up here.
  check(infoEnd <= src.size && infoEnd <= MAX_HEADER_BYTES, file, `truncated: the header needs ${infoEnd} bytes but the file has ${src.size}`);

  const metadata = new Map<string, GgufMetadataValue>();
  for (const [k, v] of Object.entries(parsed.metadata)) {
    if (k === 'version' || k === 'tensor_count' || k === 'kv_count') continue;
    metadata.set(k, v as GgufMetadataValue);
  }
  const alignment = toNumber((metadata.get('general.alignment') as number | bigint | undefined) ?? 32);
  check(Number.isInteger(alignment) && alignment >= 1 && alignment <= 1 << 20 && (alignment & (alignment - 1)) === 0, file, `general.alignment ${alignment} is not a power of two`);
  const tensors = parsed.tensorInfos.map((t) => ({
    name: t.name,
    dims: t.shape.map(toNumber),
    ggmlType: t.dtype as number,
    offset: toNumber(t.offset),
  }));
  return { version, metadata, tensors, dataOffset: toNumber(parsed.tensorDataOffset), alignment };
}
