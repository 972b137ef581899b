// Byte layouts of every stored encoding (ggml's block_q8_0, block_q4_0, block_q4_K, block_q6_K
// and plain f32/f16/bf16) and their GGML type ids. Not the math: see reference/dequant.ts.
import type { DType } from './desc';

export interface BlockLayout {
  /** Elements one block encodes along a row. */
  blockElems: number;
  /** Bytes of one block. */
  blockBytes: number;
}

/**
 * q8_0  (34 B / 32): f16 d, int8 qs[32]                     y = d * qs[j]
 * q4_0  (18 B / 32): f16 d, u8 qs[16] (lo nibble j, hi j+16) y = d * (nibble - 8)
 * q4_K (144 B / 256): f16 d, f16 dmin, u8 scales[12] (8 x 6-bit scale + 8 x 6-bit min),
 *                     u8 qs[128] (4 groups of 64: lo nibbles then hi nibbles)
 * q6_K (210 B / 256): u8 ql[128] (low 4 bits), u8 qh[64] (high 2 bits), int8 scales[16], f16 d
 */
export const BLOCK_LAYOUTS: Record<DType, BlockLayout> = {
  f32: { blockElems: 1, blockBytes: 4 },
  f16: { blockElems: 1, blockBytes: 2 },
  bf16: { blockElems: 1, blockBytes: 2 },
  q8_0: { blockElems: 32, blockBytes: 34 },
  q4_0: { blockElems: 32, blockBytes: 18 },
  q4_K: { blockElems: 256, blockBytes: 144 },
  q6_K: { blockElems: 256, blockBytes: 210 },
};

/** ggml_type ids as stored in GGUF tensor infos. */
export const GGML_TYPE_IDS: Record<DType, number> = {
  f32: 0,
  f16: 1,
  q4_0: 2,
  q8_0: 8,
  q4_K: 12,
  q6_K: 14,
  bf16: 30,
};

const DTYPE_BY_GGML_ID = new Map<number, DType>(
  Object.entries(GGML_TYPE_IDS).map(([dtype, id]) => [id, dtype as DType]),
);

export function dtypeFromGgmlId(id: number): DType | undefined {
  return DTYPE_BY_GGML_ID.get(id);
}

/** Bytes one row of `cols` elements takes; throws if cols is not whole blocks. */
export function rowBytes(dtype: DType, cols: number): number {
  const { blockElems, blockBytes } = BLOCK_LAYOUTS[dtype];
  if (cols % blockElems !== 0) {
    throw new Error(`${dtype} rows need a multiple of ${blockElems} elements, got ${cols}`);
  }
  return (cols / blockElems) * blockBytes;
}

/** Bytes of a whole tensor of this shape ([rows, cols] or [n]). */
export function tensorBytes(dtype: DType, shape: readonly number[]): number {
  const cols = shape[shape.length - 1] ?? 1;
  const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
  return rows * rowBytes(dtype, cols);
}
