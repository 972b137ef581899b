// ropeInverseFrequencies against values computed by hand from HF's _compute_llama3_parameters
// (Llama 3.1's scaling) and against llama.cpp's route (theta^(-2i/d) / rope_freqs factor).
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from './desc';
import { ropeScalingFromFactors } from './gguf-config';
import { ropeInverseFrequencies } from './rope';
import { llama3RopeFactors } from '../../tools/models/hf-to-gguf';
import { syntheticModelDesc, TINY_SYNTH_DIMS } from './testing/synthetic-model-fixtures';

/** Llama 3.1 8B: theta 500000, head 128, factor 8, low 1, high 4, original context 8192. */
const llama31: ModelConfig = {
  ...syntheticModelDesc({ arch: 'llama', dims: TINY_SYNTH_DIMS }).config,
  headDim: 128,
  ropeTheta: 500000,
  ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
};

/**
 * index -> inverse frequency, in f64, worked out from the formula: i <= 28 keep theta^(-2i/128)
 * (wavelength < 2048), i >= 35 divide it by 8 (wavelength > 8192), 29..34 blend with
 * smooth = (8192 / wavelength - 1) / 3 (0.8036 at i = 29 down to 0.0745 at i = 34).
 */
const HAND_COMPUTED: Array<[number, number]> = [
  [0, 1],
  [1, 0.8146172338565447],
  [20, 0.016560440080994446],
  [29, 0.002166570763503359],
  [30, 0.0013718935677611381],
  [31, 0.0008567514129196321],
  [32, 0.0005248461609929547],
  [33, 0.00031269375038406517],
  [34, 0.00017850781276799638],
  [35, 9.556212353964683e-5],
  [40, 3.428102195952591e-5],
  [63, 3.068925988914511e-7],
];

/** Within the f32 rounding of an f64 value: half an ulp is 2^-24 of it, allow one ulp. */
function expectF32Of(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(Math.abs(expected) * 2 ** -23);
}

describe('ropeInverseFrequencies', () => {
  it('is theta^(-2i / headDim), rounded to f32, without scaling', () => {
    const plain = ropeInverseFrequencies({ ...llama31, ropeScaling: null }, 0);
    expect(plain.length).toBe(64);
    for (let i = 0; i < 64; i++) expect(plain[i]).toBe(Math.fround(500000 ** (-i / 64)));
  });

  it("gives Llama 3.1's scaled frequencies as worked out by hand", () => {
    const scaled = ropeInverseFrequencies(llama31, 0);
    for (const [i, expected] of HAND_COMPUTED) expectF32Of(scaled[i], expected);
    // the ends of the ramp: unscaled up to 28, divided by 8 from 35
    for (let i = 0; i <= 28; i++) expect(scaled[i]).toBe(Math.fround(500000 ** (-i / 64)));
    for (let i = 35; i < 64; i++) expect(scaled[i]).toBe(Math.fround(500000 ** (-i / 64) / 8));
  });

  it("agrees with llama.cpp's route: theta^(-2i/d) over convert_hf_to_gguf's rope_freqs factors", () => {
    const scaled = ropeInverseFrequencies(llama31, 0);
    const factors = llama3RopeFactors(llama31)!;
    for (let i = 0; i < 64; i++) expectF32Of(scaled[i], 500000 ** (-i / 64) / Math.fround(factors[i]));
  });

  it('gives the same frequencies from the scaling a GGUF loader recovers from those factors', () => {
    const recovered = ropeScalingFromFactors(llama3RopeFactors(llama31)!, 128, 500000);
    const fromGguf = ropeInverseFrequencies({ ...llama31, ropeScaling: recovered }, 0);
    const scaled = ropeInverseFrequencies(llama31, 0);
    for (let i = 0; i < 64; i++) expectF32Of(fromGguf[i], scaled[i]);
  });
});
