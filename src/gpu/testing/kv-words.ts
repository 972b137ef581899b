// Test-only: one layer's K/V cache as the GPU pool stores it (kv-arena.ts kvLayerLayout) from the
// CPU twin's f32 values, and back. Values must already be what the type stores (kvWrite rounded
// them), so encoding is exact. Not used by product code.
import { f16ToF32, f32ToF16 } from '../../model/half';
import type { KvCacheType } from '../../engine/kv-types';
import { kvLayerLayout } from '../kv-arena';

/** K and V [numSlots, kvDim] (already rounded to `type`) -> the layer's u32 words. */
export function encodeKvWords(type: KvCacheType, k: Float32Array, v: Float32Array, kvDim: number): Uint32Array {
  const numSlots = k.length / kvDim;
  const layout = kvLayerLayout(type, numSlots, kvDim);
  const words = new Uint32Array(layout.words);
  if (type === 'f32') {
    words.set(new Uint32Array(k.buffer, k.byteOffset, k.length));
    words.set(new Uint32Array(v.buffer, v.byteOffset, v.length), layout.vOffsetWords);
    return words;
  }
  if (type === 'f16') {
    for (let i = 0; i < k.length; i += 2) {
      words[i / 2] = f32ToF16(k[i]!) | (f32ToF16(k[i + 1]!) << 16);
      words[layout.vOffsetWords + i / 2] = f32ToF16(v[i]!) | (f32ToF16(v[i + 1]!) << 16);
    }
    return words;
  }
  const bytes = new Uint8Array(words.buffer);
  const scales = new Uint16Array(words.buffer);
  [k, v].forEach((x, kind) => {
    for (let b = 0; b < x.length / 32; b++) {
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[32 * b + j]!));
      const d = Math.fround(amax / 127); // the stored scale itself: the block's extreme is +-127 * d
      for (let j = 0; j < 32; j++) bytes[4 * kind * layout.vOffsetWords + 32 * b + j] = (d === 0 ? 0 : Math.round(x[32 * b + j]! / d)) & 0xff;
      scales[2 * (layout.scalesOffsetWords + b) + kind] = f32ToF16(d);
    }
  });
  return words;
}

/** The layer's u32 words -> K and V [numSlots, kvDim] as f32. */
export function decodeKvWords(type: KvCacheType, words: Uint32Array, numSlots: number, kvDim: number): { k: Float32Array; v: Float32Array } {
  const layout = kvLayerLayout(type, numSlots, kvDim);
  const n = numSlots * kvDim;
  const k = new Float32Array(n);
  const v = new Float32Array(n);
  [k, v].forEach((x, kind) => {
    const region = kind * layout.vOffsetWords;
    if (type === 'f32') {
      x.set(new Float32Array(words.buffer, words.byteOffset + 4 * region, n));
      return;
    }
    for (let i = 0; i < n; i++) {
      if (type === 'f16') x[i] = f16ToF32((words[region + (i >> 1)]! >>> (16 * (i & 1))) & 0xffff);
      else {
        const q = (words[region + (i >> 2)]! << (24 - 8 * (i & 3))) >> 24; // sign-extended byte
        const d = f16ToF32((words[layout.scalesOffsetWords + (i >> 5)]! >>> (16 * kind)) & 0xffff);
        x[i] = q * d;
      }
    }
  });
  return { k, v };
}
