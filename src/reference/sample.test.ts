// Tests of the CPU sampler: greedy ties, the seeded per-position draw, temperature, top-k, top-p,
// non-finite logits, and the GPU arithmetic the twin follows (expWeight, the f32 reciprocal of temperature).
// Not the GPU sampler's parity test (that lives beside the GPU runner).
import { describe, expect, it } from 'vitest';
import { argmax, expWeight, sampleToken } from './sample';
import { inverseTemperature, SAMPLE_CANDIDATE_CAP } from '../engine/sample-numerics';
import { sampleUniform } from '../engine/rng';
import { NON_FINITE_LOGITS } from '../engine/types';

const params = (temperature: number, topK = 0, topP = 1, seed = 42) => ({ temperature, topK, topP, seed });

/** Empirical distribution of sampleToken over positions 0..n-1. */
function histogram(logits: Float32Array, p: ReturnType<typeof params>, n: number): number[] {
  const counts = new Array<number>(logits.length).fill(0);
  for (let pos = 0; pos < n; pos++) counts[sampleToken(logits, p, pos)]++;
  return counts.map((c) => c / n);
}

describe('greedy', () => {
  it('takes the argmax, lowest id on ties', () => {
    expect(argmax(new Float32Array([1, 3, 3, 2]))).toBe(1);
    expect(sampleToken(new Float32Array([0, -1, 5, 5]), params(0), 9)).toBe(2);
    expect(sampleToken(new Float32Array([0, -1, 5, 5]), params(1.5, 1), 9)).toBe(2);
  });
});

describe('temperature sampling', () => {
  const logits = new Float32Array([2, 1, 0, -1, 0.5]);

  it('is a pure function of (logits, seed, position)', () => {
    const a = Array.from({ length: 50 }, (_, pos) => sampleToken(logits, params(1, 0, 1, 7), pos));
    const b = Array.from({ length: 50 }, (_, pos) => sampleToken(logits, params(1, 0, 1, 7), pos));
    const c = Array.from({ length: 50 }, (_, pos) => sampleToken(logits, params(1, 0, 1, 8), pos));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('draws from softmax(logits / temperature)', () => {
    for (const temperature of [1, 0.5]) {
      const freq = histogram(logits, params(temperature), 20000);
      const e = Array.from(logits, (l) => Math.exp(l / temperature));
      const sum = e.reduce((a, b) => a + b, 0);
      e.forEach((w, i) => expect(Math.abs(freq[i] - w / sum)).toBeLessThan(0.015));
    }
  });

  it('walks ids in rank order: the draw u picks the first id whose running weight exceeds u * total', () => {
    const flat = new Float32Array([0, 0, 0, 0]); // equal weights: rank order is id order
    for (let pos = 0; pos < 20; pos++) {
      const u = sampleUniform(3, pos);
      expect(sampleToken(flat, params(1, 0, 1, 3), pos)).toBe(Math.floor(u * 4));
    }
  });
});

describe('top-k and top-p', () => {
  const logits = new Float32Array([0.1, 3, 2.9, -2, 2.95, 1]);

  it('top-k keeps only the k highest logits, renormalized', () => {
    const freq = histogram(logits, params(1, 2), 20000);
    expect(freq[1] + freq[4]).toBe(1);
    const want = Math.exp(3) / (Math.exp(3) + Math.exp(2.95));
    expect(Math.abs(freq[1] - want)).toBeLessThan(0.015);
  });

  it('top-p keeps the shortest ranked prefix reaching p of the mass', () => {
    const e = Array.from(logits, (l) => Math.exp(l));
    const sum = e.reduce((a, b) => a + b, 0);
    // ranked: 1, 4, 2, 5, 0, 3; the first three hold (e1 + e4 + e2) / sum of the mass
    const top3 = (e[1] + e[4] + e[2]) / sum;
    const top2 = (e[1] + e[4]) / sum;
    const p = (top2 + top3) / 2;
    const freq = histogram(logits, params(1, 0, p), 20000);
    expect(freq[1] + freq[4] + freq[2]).toBe(1);
    expect(freq[2]).toBeGreaterThan(0.2);
    // exactly reaching p keeps the boundary id
    const freqExact = histogram(logits, params(1, 0, top2 * (1 - 1e-12)), 2000);
    expect(freqExact[1] + freqExact[4]).toBe(1);
  });

  it('ranks equal logits by lower id, so a top-k cut through a tie keeps the lower ids', () => {
    const tied = new Float32Array([1, 5, 5, 5, 0]);
    const freq = histogram(tied, params(1, 2), 5000);
    expect(freq[1] + freq[2]).toBe(1);
    expect(freq[3]).toBe(0);
  });
});

describe('non-finite logits', () => {
  it('returns NON_FINITE_LOGITS for any NaN or infinite logit, greedy or not', () => {
    for (const bad of [NaN, Infinity, -Infinity]) {
      for (const at of [0, 2, 4]) {
        const logits = new Float32Array([2, 1, 0, -1, 0.5]);
        logits[at] = bad;
        for (const p of [params(0), params(1), params(0.7, 1), params(1.2, 3, 0.8)]) {
          expect(sampleToken(logits, p, 11), `${bad} at ${at}, T ${p.temperature}`).toBe(NON_FINITE_LOGITS);
        }
      }
    }
  });

  it('is never a token id or the no-sample marker', () => {
    expect(NON_FINITE_LOGITS).toBeLessThan(-1);
    expect(sampleToken(new Float32Array([3.4e38, -3.4e38, 0]), params(1), 2)).toBeGreaterThanOrEqual(0); // huge but finite
  });
});

describe('the twin follows the GPU arithmetic', () => {
  it('expWeight is exp within 2 f32 ulps on [-80, 0] and 0 below', () => {
    for (let i = 0; i <= 20000; i++) {
      const x = Math.fround(-80 * (i / 20000) ** 2);
      const want = Math.exp(x);
      expect(Math.abs(expWeight(x) - want) / want, `x ${x}`).toBeLessThan(2.5e-7);
    }
    expect(expWeight(0)).toBe(1);
    expect(expWeight(-80.5)).toBe(0);
  });

  it('reads temperature through an f32 reciprocal: 0 (greedy) for temperature <= 0, finite and normal otherwise', () => {
    expect(inverseTemperature(0)).toBe(0);
    expect(inverseTemperature(-1)).toBe(0);
    expect(inverseTemperature(0.5)).toBe(2);
    expect(inverseTemperature(0.7)).toBe(Math.fround(1 / Math.fround(0.7)));
    expect(inverseTemperature(1e-40)).toBe(Math.fround(3.4028234663852886e38));
    expect(inverseTemperature(1e39)).toBe(Math.fround(2 ** -126));
  });

  it('past the candidate cap (bisection) and under it (gathered) draw from the same distribution', () => {
    const vocab = SAMPLE_CANDIDATE_CAP + 200;
    const logits = new Float32Array(vocab).fill(-30);
    logits.set([2, 1, 0, -1, 0.5]);
    const cap = histogram(logits, params(1, 0, 1), 4000).slice(0, 5); // all ids kept: the fallback
    const e = [2, 1, 0, -1, 0.5].map(Math.exp);
    const sum = e.reduce((a, b) => a + b, 0);
    e.forEach((w, i) => expect(Math.abs(cap[i]! - w / sum)).toBeLessThan(0.03));
    const gathered = histogram(logits, params(1, 5), 4000).slice(0, 5);
    e.forEach((w, i) => expect(Math.abs(gathered[i]! - w / sum)).toBeLessThan(0.03));
  });
});
