// RoPE's inverse frequencies of a layer from a ModelConfig, with Llama-3 and linear scaling: the one
// definition both runners read (src/reference's rope, src/gpu's rope tables). Not the rotation.
import type { ModelConfig, RopeScaling } from './desc';

/** A layer's RoPE base and scaling: gemma3's sliding-window layers have their own, unscaled. */
export function layerRope(config: ModelConfig, layer: number): { theta: number; scaling: RopeScaling | null } {
  const sliding = config.layerWindows[layer]! > 0;
  if (sliding && config.slidingRopeTheta !== null) return { theta: config.slidingRopeTheta, scaling: null };
  return { theta: config.ropeTheta, scaling: config.ropeScaling };
}

/**
 * [headDim / 2] inverse frequencies theta^(-2i / headDim) of layer `layer`, computed in f64 and
 * rounded to f32. Linear scaling divides each by `factor` (positions over factor). Llama-3 scaling
 * (HF's _compute_llama3_parameters): wavelengths shorter than orig / highFreqFactor keep their
 * frequency, longer than orig / lowFreqFactor divide it by `factor`, and those between blend the
 * two linearly in orig / wavelength.
 */
export function ropeInverseFrequencies(config: ModelConfig, layer: number): Float32Array {
  const half = config.headDim / 2;
  const invFreq = new Float32Array(half); // [headDim / 2]
  const { theta, scaling: s } = layerRope(config, layer);
  for (let i = 0; i < half; i++) {
    const freq = 1 / Math.pow(theta, (2 * i) / config.headDim);
    if (!s) {
      invFreq[i] = freq;
      continue;
    }
    if (s.type === 'linear') {
      invFreq[i] = freq / s.factor;
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
