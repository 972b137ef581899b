// Parity of shaders/sample.wgsl's passes with sampleToken (greedy, temperature, top-k, top-p, the
// per-position RNG), token for token in both kernel settings: ties, cuts past the vocabulary, the
// candidate cap's edge and the fallback past it, extreme temperatures, non-finite logits, batch
// invariance. Node WebGPU (SwiftShader).
import { describe, expect, it } from 'vitest';
import { NON_FINITE_LOGITS, type SamplingParams } from '../engine/types';
import { sampleToken } from '../reference/sample';
import type { KernelSetting } from './kernels';
import { sampleOnGpu, type SampleRow } from './testing/sample-runner';
import { seededFloats } from './testing/test-util';

/** Logits spread over ~8 nats so cuts and draws land on many different ids. */
function logitsFor(seed: number, vocab: number): Float32Array {
  return seededFloats(seed, vocab, 4);
}

/** Logits on a grid of 0.25: many ids share each value, so cuts fall inside ties. */
function tiedLogitsFor(seed: number, vocab: number): Float32Array {
  return logitsFor(seed, vocab).map((x) => Math.round(x * 4) / 4);
}

/** Ids ranked like the twin: logit descending, lower id first on ties. */
function ranked(logits: Float32Array): number[] {
  return Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]! || a - b);
}

const twin = (rows: SampleRow[]) => rows.map((row) => sampleToken(row.logits, row.sampling, row.pos));

/** `count` rows cycling through `settings`, each with its own logits, seed and position. */
function rowsOf(count: number, vocab: number, settings: Array<Omit<SamplingParams, 'seed'>>, logits: (i: number) => Float32Array = (i) => logitsFor(100 + i, vocab)): SampleRow[] {
  return Array.from({ length: count }, (_, i) => ({ logits: logits(i), sampling: { ...settings[i % settings.length]!, seed: 1000 + 7 * i }, pos: 3 * i + 1 }));
}

describe.each<KernelSetting>(['cpu', 'gpu'])("sample.wgsl, the '%s' setting", (setting) => {
  const sample = (rows: SampleRow[]) => sampleOnGpu(rows, setting);

  it('greedy returns the argmax, lowest id on ties, also via topK = 1 and across chunks', async () => {
    const logits = logitsFor(1, 5000);
    logits[4321] = 9; // a later chunk in the 'gpu' setting
    logits[2211] = 9;
    const rows: SampleRow[] = [
      { logits, sampling: { temperature: 0, topK: 0, topP: 1, seed: 1 }, pos: 5 },
      { logits, sampling: { temperature: 0.8, topK: 1, topP: 0.5, seed: 1 }, pos: 5 },
    ];
    expect(await sample(rows)).toEqual([2211, 2211]);
  });

  it('draws the same ids as sampleToken across settings, seeds and positions', async () => {
    const rows = rowsOf(48, 500, [
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.7, topK: 40, topP: 1 },
      { temperature: 1.3, topK: 0, topP: 0.9 },
      { temperature: 0.8, topK: 20, topP: 0.6 },
      { temperature: 0.7, topK: 40, topP: 0.9 },
      { temperature: 1, topK: 1024, topP: 0.95 },
    ]);
    expect(await sample(rows)).toEqual(twin(rows));
  });

  it('agrees on cuts through ties, top-k past the vocabulary or at the cap, and extreme temperatures', async () => {
    for (const vocab of [97, 4099]) {
      const settings: Array<Omit<SamplingParams, 'seed'>> = [
        { temperature: 0.7, topK: 40, topP: 0.9 },
        { temperature: 1, topK: 5000, topP: 1 }, // past the vocabulary
        { temperature: 1, topK: 1024, topP: 0.8 }, // at the cap
        { temperature: 1e-3, topK: 50, topP: 0.9 },
        { temperature: 1e-30, topK: 7, topP: 1 },
        { temperature: 1e4, topK: 300, topP: 0.5 },
        { temperature: 1e30, topK: 64, topP: 1 },
        { temperature: 0.9, topK: 2, topP: 0.3 },
      ];
      const tied = rowsOf(24, vocab, settings, (i) => tiedLogitsFor(200 + i, vocab));
      const flat = rowsOf(8, vocab, settings, () => new Float32Array(vocab).fill(0.5)); // every id ties
      const plain = rowsOf(16, vocab, settings);
      const rows = [...tied, ...flat, ...plain];
      expect(await sample(rows), `vocab ${vocab}`).toEqual(twin(rows));
    }
  });

  it('agrees past the candidate cap (the bisection fallback), with and without cuts', async () => {
    const rows = rowsOf(4, 4099, [
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.8, topK: 1025, topP: 0.9 },
      { temperature: 1.2, topK: 0, topP: 0.7 },
    ]);
    expect(await sample(rows)).toEqual(twin(rows));
  });

  it('runs a 128k vocabulary like sampleToken', async () => {
    const vocab = 128256;
    const rows = rowsOf(3, vocab, [
      { temperature: 0.7, topK: 40, topP: 0.9 },
      { temperature: 0, topK: 0, topP: 1 },
      { temperature: 1, topK: 1000, topP: 0.95 },
    ]);
    expect(await sample(rows)).toEqual(twin(rows));
  });

  it('keeps top-k draws inside the k best ids, ties broken by lower id', async () => {
    const logits = logitsFor(7, 64);
    for (const id of [5, 9, 40, 41]) logits[id] = 6; // a 4-way tie at the top
    const rows: SampleRow[] = Array.from({ length: 40 }, (_, i) => ({ logits, sampling: { temperature: 2, topK: 3, topP: 1, seed: i }, pos: i }));
    const drawn = new Set(await sample(rows));
    expect([...drawn].every((id) => [5, 9, 40].includes(id))).toBe(true);
    expect(drawn.size).toBeGreaterThan(1);
  });

  it('keeps top-p draws inside the shortest ranked prefix reaching p', async () => {
    const logits = logitsFor(8, 200);
    const topP = 0.5;
    const order = ranked(logits);
    const weights = order.map((id) => Math.exp(logits[id]! - logits[order[0]!]!));
    const total = weights.reduce((a, b) => a + b, 0);
    let running = 0;
    let size = 0;
    while (running < topP * total) running += weights[size++]!;
    const allowed = new Set(order.slice(0, size));
    const rows: SampleRow[] = Array.from({ length: 40 }, (_, i) => ({ logits, sampling: { temperature: 1, topK: 0, topP, seed: 77 }, pos: i }));
    const drawn = await sample(rows);
    expect(drawn.every((id) => allowed.has(id))).toBe(true);
    expect(new Set(drawn).size).toBeGreaterThan(1);
  });

  it('marks a row with a NaN or infinite logit NON_FINITE_LOGITS like sampleToken, leaving the other rows alone', async () => {
    const vocab = 3000;
    const poisoned = (id: number, value: number): Float32Array => {
      const logits = logitsFor(60 + id, vocab);
      logits[id] = value;
      return logits;
    };
    const hot = { temperature: 0.9, topK: 40, topP: 0.95, seed: 5 };
    const greedySettings = { temperature: 0, topK: 0, topP: 1, seed: 5 };
    const clean: SampleRow = { logits: logitsFor(9, vocab), sampling: hot, pos: 4 };
    const rows: SampleRow[] = [
      { logits: poisoned(0, NaN), sampling: greedySettings, pos: 3 },
      clean,
      { logits: poisoned(2999, NaN), sampling: hot, pos: 3 }, // the last id, in the last chunk
      { logits: poisoned(130, Infinity), sampling: greedySettings, pos: 3 },
      { logits: poisoned(7, -Infinity), sampling: hot, pos: 3 },
      { logits: poisoned(2100, NaN), sampling: { ...hot, topK: 1 }, pos: 3 },
    ];
    const gpu = await sample(rows);
    expect(gpu).toEqual(twin(rows));
    expect(gpu).toEqual([NON_FINITE_LOGITS, sampleToken(clean.logits, hot, 4), NON_FINITE_LOGITS, NON_FINITE_LOGITS, NON_FINITE_LOGITS, NON_FINITE_LOGITS]);
    expect(await sample([clean])).toEqual([gpu[1]]);
  });

  it('gives a row the same id alone and among 15 other rows', async () => {
    const probe: SampleRow = { logits: logitsFor(3, 3000), sampling: { temperature: 0.9, topK: 50, topP: 0.95, seed: 42 }, pos: 17 };
    const [alone] = await sample([probe]);
    const others = Array.from({ length: 15 }, (_, i) => ({ logits: logitsFor(50 + i, 3000), sampling: { temperature: 1, topK: i % 3 === 0 ? 0 : 10 * i, topP: 1, seed: i }, pos: i }));
    const batch = await sample([...others.slice(0, 9), probe, ...others.slice(9)]);
    expect(batch[9]).toBe(alone);
  });
});
