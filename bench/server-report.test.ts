// The Cohort vs llama-server report's pure figures: the union of generation intervals and a run's rates.
// Not the benchmark itself (bench/server.node.ts needs llama-server and the GPU device).
import { describe, expect, it } from 'vitest';
import { llamaRun, pointSpeedups, modeFigures, unionMs } from './server-report';

const counters = { decodeCalls: 10, tokensPredicted: 20, promptTokens: 2, promptTokensCached: 100, busyPerDecode: 2, maxBusy: 2, maxDeferred: 0, numSamples: 3 };

describe('server bench figures', () => {
  it('unionMs counts overlapping intervals once and gaps not at all', () => {
    expect(unionMs([])).toBe(0);
    expect(unionMs([[0, 10]])).toBe(10);
    expect(unionMs([[5, 15], [0, 10], [20, 30]])).toBe(25);
    expect(unionMs([[0, 10], [2, 3]])).toBe(10);
  });

  it('a llama-server run: decode tokens after each first over the union, end to end over send to end', () => {
    const streams = [
      { sentAtMs: 0, endAtMs: 110, predictedN: 11, predictedMs: 100 },
      { sentAtMs: 0, endAtMs: 110, predictedN: 11, predictedMs: 100 },
    ];
    const run = llamaRun(0, streams, ['a', 'b'], counters);
    expect(run.newTokens).toBe(22);
    expect(run.decodeTokens).toBe(20);
    expect(run.decodeTokensPerSec).toBeCloseTo(200);
    expect(run.endToEndTokensPerSec).toBeCloseTo(200);
    expect(run.meanBatch).toBe(2);
    const serialized = llamaRun(0, [streams[0]!, { ...streams[1]!, sentAtMs: 110, endAtMs: 220 }], ['a', 'b'], counters);
    expect(serialized.decodeTokensPerSec).toBeCloseTo(100);
    expect(pointSpeedups({ batched: modeFigures([run]), serialized: modeFigures([serialized]) }).decode).toBeCloseTo(2);
  });
});
