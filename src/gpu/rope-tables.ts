// Host-side RoPE tables for shaders/rope_kv_write.wgsl: inverse frequencies (with Llama-3 scaling) and
// two-level cos/sin tables computed in f64. Not the rotation itself: that runs on the GPU.
import type { ModelConfig } from '../model/desc';

/**
 * [headDim / 2] inverse frequencies theta^(-2i / headDim), Llama-3 scaled when configured
 * (HF's _compute_llama3_parameters), rounded to f32 like the CPU forward's.
 */
export function ropeInverseFrequencies(config: ModelConfig): Float32Array {
  const half = config.headDim / 2;
  const invFreq = new Float32Array(half); // [headDim / 2]
  const s = config.ropeScaling;
  for (let i = 0; i < half; i++) {
    const freq = 1 / Math.pow(config.ropeTheta, (2 * i) / config.headDim);
    if (!s) {
      invFreq[i] = freq;
      continue;
    }
    const lowFreqWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
    const highFreqWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highFreqWavelen) invFreq[i] = freq;
    else if (wavelen > lowFreqWavelen) invFreq[i] = freq / s.factor;
    else {
      const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
      invFreq[i] = (1 - smooth) * (freq / s.factor) + smooth * freq;
    }
  }
  return invFreq;
}

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
