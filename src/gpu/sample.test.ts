// Parity of shaders/sample.wgsl with sampleToken (greedy, temperature, top-k, top-p, the
// per-position RNG), the cuts' sets, non-finite logits, and batch invariance. Node WebGPU.
import { describe, expect, it } from 'vitest';
import { NON_FINITE_LOGITS, type SamplingParams } from '../engine/types';
import { sampleToken } from '../reference/sample';
import { runKernel } from './testing/kernel-harness';
import { SAMPLE_INFO_WORDS } from './step-meta';
import { seededFloats } from './testing/test-util';

interface SampleRow {
  logits: Float32Array;
  sampling: SamplingParams;
  pos: number;
}

async function sampleOnGpu(rows: SampleRow[]): Promise<number[]> {
  const vocab = rows[0]!.logits.length;
  const logits = new Float32Array(rows.length * vocab); // [numRows, vocab]
  const info = new ArrayBuffer(rows.length * SAMPLE_INFO_WORDS * 4); // [numRows, SampleInfo]
  const u32 = new Uint32Array(info);
  const f32 = new Float32Array(info);
  rows.forEach((row, r) => {
    logits.set(row.logits, r * vocab);
    const o = r * SAMPLE_INFO_WORDS;
    f32[o] = row.sampling.temperature;
    u32[o + 1] = row.sampling.topK;
    f32[o + 2] = row.sampling.topP;
    u32[o + 3] = row.sampling.seed;
    u32[o + 4] = row.pos;
  });
  const result = await runKernel(
    'sample',
    {},
    [new Uint32Array([rows.length, vocab, 0, 0]), logits, info, new Float32Array(rows.length * vocab), new Uint32Array(rows.length)],
    [rows.length],
    [4],
  );
  // read as the runner does (Int32Array), so NON_FINITE_LOGITS compares as itself
  return Array.from(new Int32Array(result.get(4)!));
}

/** Logits spread over ~8 nats so cuts and draws land on many different ids. */
function logitsFor(seed: number, vocab: number): Float32Array {
  return seededFloats(seed, vocab, 4);
}

/** Ids ranked like the twin: logit descending, lower id first on ties. */
function ranked(logits: Float32Array): number[] {
  return Array.from(logits.keys()).sort((a, b) => logits[b]! - logits[a]! || a - b);
}

describe('sample.wgsl', () => {
  it('greedy returns the argmax, lowest id on ties, also via topK = 1', async () => {
    const logits = logitsFor(1, 300);
    logits[17] = 9;
    logits[211] = 9;
    const rows: SampleRow[] = [
      { logits, sampling: { temperature: 0, topK: 0, topP: 1, seed: 1 }, pos: 5 },
      { logits, sampling: { temperature: 0.8, topK: 1, topP: 0.5, seed: 1 }, pos: 5 },
    ];
    expect(await sampleOnGpu(rows)).toEqual([17, 17]);
  });

  it('draws the same ids as sampleToken across settings, seeds and positions', async () => {
    const vocab = 500; // not a multiple of the 256-thread workgroup
    const settings: Array<Omit<SamplingParams, 'seed'>> = [
      { temperature: 1, topK: 0, topP: 1 },
      { temperature: 0.7, topK: 40, topP: 1 },
      { temperature: 1.3, topK: 0, topP: 0.9 },
      { temperature: 0.8, topK: 20, topP: 0.6 },
    ];
    const rows: SampleRow[] = [];
    for (let i = 0; i < 32; i++) {
      rows.push({ logits: logitsFor(100 + i, vocab), sampling: { ...settings[i % settings.length]!, seed: 1000 + i }, pos: 3 * i + 1 });
    }
    const gpu = await sampleOnGpu(rows);
    const cpu = rows.map((row) => sampleToken(row.logits, row.sampling, row.pos));
    expect(gpu).toEqual(cpu);
  });

  it('keeps top-k draws inside the k best ids, ties broken by lower id', async () => {
    const vocab = 64;
    const logits = logitsFor(7, vocab);
    for (const id of [5, 9, 40, 41]) logits[id] = 6; // a 4-way tie at the top
    const topK = 3;
    const rows: SampleRow[] = Array.from({ length: 40 }, (_, i) => ({ logits, sampling: { temperature: 2, topK, topP: 1, seed: i }, pos: i }));
    const drawn = new Set(await sampleOnGpu(rows));
    expect([...drawn].every((id) => [5, 9, 40].includes(id))).toBe(true);
    expect(drawn.size).toBeGreaterThan(1);
  });

  it('keeps top-p draws inside the shortest ranked prefix reaching p', async () => {
    const vocab = 200;
    const logits = logitsFor(8, vocab);
    const topP = 0.5;
    const order = ranked(logits);
    const weights = order.map((id) => Math.exp(logits[id]! - logits[order[0]!]!));
    const total = weights.reduce((a, b) => a + b, 0);
    let running = 0;
    let size = 0;
    while (running < topP * total) running += weights[size++]!;
    const allowed = new Set(order.slice(0, size));
    const rows: SampleRow[] = Array.from({ length: 40 }, (_, i) => ({ logits, sampling: { temperature: 1, topK: 0, topP, seed: 77 }, pos: i }));
    const drawn = await sampleOnGpu(rows);
    expect(drawn.every((id) => allowed.has(id))).toBe(true);
    expect(new Set(drawn).size).toBeGreaterThan(1);
  });

  it('marks a row with a NaN or infinite logit NON_FINITE_LOGITS like sampleToken, leaving the other rows alone', async () => {
    const vocab = 300;
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
      { logits: poisoned(299, NaN), sampling: hot, pos: 3 }, // the last id, past the first stride
      { logits: poisoned(130, Infinity), sampling: greedySettings, pos: 3 },
      { logits: poisoned(7, -Infinity), sampling: hot, pos: 3 },
      { logits: poisoned(64, NaN), sampling: { ...hot, topK: 1 }, pos: 3 },
    ];
    const gpu = await sampleOnGpu(rows);
    expect(gpu).toEqual(rows.map((row) => sampleToken(row.logits, row.sampling, row.pos)));
    expect(gpu).toEqual([NON_FINITE_LOGITS, sampleToken(clean.logits, hot, 4), NON_FINITE_LOGITS, NON_FINITE_LOGITS, NON_FINITE_LOGITS, NON_FINITE_LOGITS]);
    expect(await sampleOnGpu([clean])).toEqual([gpu[1]]);
  });

  it('gives a row the same id alone and among 15 other rows', async () => {
    const probe: SampleRow = { logits: logitsFor(3, 300), sampling: { temperature: 0.9, topK: 50, topP: 0.95, seed: 42 }, pos: 17 };
    const [alone] = await sampleOnGpu([probe]);
    const others = Array.from({ length: 15 }, (_, i) => ({ logits: logitsFor(50 + i, 300), sampling: { temperature: 1, topK: 0, topP: 1, seed: i }, pos: i }));
    const batch = await sampleOnGpu([...others.slice(0, 9), probe, ...others.slice(9)]);
    expect(batch[9]).toBe(alone);
  });
});
