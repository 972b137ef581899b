// Host-side RoPE tables for shaders/rope_kv_write.wgsl: two-level cos/sin tables computed in f64 over
// src/model/rope.ts's inverse frequencies. Not the frequencies (one definition there), not the rotation.

/** Table level L: positions 0 .. L*L - 1 are covered. */
export function ropeTableLevel(maxPositions: number): number {
  return Math.max(1, Math.ceil(Math.sqrt(maxPositions)));
}

/**
 * [2, level, half] (cos, sin) pairs, flattened: entry (0, lo, i) at angle lo * invFreq[i],
 * entry (1, hi, i) at angle hi * level * invFreq[i]. rope_kv_write.wgsl rebuilds
 * angle(pos) = angle(hi * level) + angle(lo) with the angle-sum identity.
 */
export function ropeTable(invFreq: Float32Array, level: number): Float32Array<ArrayBuffer> {
  const half = invFreq.length;
  const table = new Float32Array(2 * level * half * 2); // [2, level, half, 2]
  for (let j = 0; j < level; j++) {
    for (let i = 0; i < half; i++) {
      const low = j * invFreq[i];
      const high = j * level * invFreq[i];
      table.set([Math.cos(low), Math.sin(low)], (j * half + i) * 2);
      table.set([Math.cos(high), Math.sin(high)], ((level + j) * half + i) * 2);
    }
  }
  return table;
}
