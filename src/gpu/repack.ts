// Quantized weights as the GPU kernels read them: q8_0 and q4_0 blocks (34 and 18 bytes, so only
// 2-byte aligned as ggml stores them) repacked at upload into a quant plane and a scale plane.
// A permutation of bytes, nothing decoded: the values, the CPU twin and llama.cpp agreement hold.
import type { DType } from '../model/desc';

/** Stored types repacked at upload; every other type is bound in ggml's own layout. */
export const REPACKED_DTYPES: ReadonlySet<DType> = new Set<DType>(['q8_0', 'q4_0']);

/** Quant bytes of one 32-weight block: int8 x 32 (q8_0), or 16 bytes of nibbles (q4_0). */
function quantBytes(dtype: DType): number {
  return dtype === 'q8_0' ? 32 : 16;
}

/** Byte offset of the scale plane in a repacked [rows, cols] matrix (the quant plane's size). */
export function scalePlaneOffset(dtype: DType, rows: number, cols: number): number {
  return rows * (cols / 32) * quantBytes(dtype);
}

/**
 * [rows, cols] ggml q8_0 / q4_0 blocks -> the quant plane (every block's quants in row-major block
 * order, so a row's quants are contiguous and each block's start 16-byte aligned), then the scale
 * plane (every block's f16 scale in the same order). Other types come back as they are.
 */
export function repackForGpu(data: Uint8Array, dtype: DType, rows: number, cols: number): Uint8Array {
  if (!REPACKED_DTYPES.has(dtype)) return data;
  const q = quantBytes(dtype);
  const blockBytes = q + 2;
  const numBlocks = rows * (cols / 32);
  const out = new Uint8Array(numBlocks * blockBytes);
  const scales = numBlocks * q;
  for (let b = 0; b < numBlocks; b++) {
    const at = b * blockBytes;
    out[scales + 2 * b] = data[at]!;
    out[scales + 2 * b + 1] = data[at + 1]!;
    out.set(data.subarray(at + 2, at + blockBytes), b * q);
  }
  return out;
}
