// RoPE's inverse frequencies from a ModelConfig, with Llama-3 frequency scaling: the one
// definition both runners read (src/reference's rope, src/gpu's rope tables). Not the rotation.
import type { ModelConfig } from './desc';

/**
 * [headDim / 2] inverse frequencies theta^(-2i / headDim), computed in f64 and rounded to f32.
 * With Llama-3 scaling (HF's _compute_llama3_parameters): wavelengths shorter than
 * orig / highFreqFactor keep their frequency, longer than orig / lowFreqFactor divide it by
 * `factor`, and those between blend the two linearly in orig / wavelength.
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
