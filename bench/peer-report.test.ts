// The peer report's arithmetic (runs from steps, medians, llama_decode calls per step, the Cohort / llama.cpp ratio)
// and its markdown. No engine runs here: bench:peer measures; this holds what it reports to the figures given.
import { describe, expect, it } from 'vitest';
import type { MeasuredStep } from '../src/protocol/metrics';
import { engineFigures, engineRun, peerPoint, renderPeerMarkdown, type PeerBenchReport } from './peer-report';

const decodeStep = (startedAtMs: number, elapsedMs: number, rows: number): MeasuredStep => ({
  startedAtMs, elapsedMs, rows: Array.from({ length: rows }, (_, r) => ({ sessionId: `s${r}`, kind: 'decode' as const, numTokens: 1, newTokenIds: [r] })),
});

describe('peer report', () => {
  it('counts decode tokens over summed step time', () => {
    const run = engineRun([decodeStep(0, 10, 8), decodeStep(50, 30, 8)], 2);
    expect(run).toEqual({ tokensPerSec: 400, decodeTokens: 16, forwardPasses: 2, decodeMs: 40, decodeCalls: 2 });
  });
  it('takes medians, calls per step and the ratio', () => {
    const cohort = [engineRun([decodeStep(0, 10, 4)]), engineRun([decodeStep(0, 20, 4)]), engineRun([decodeStep(0, 40, 4)])];
    const llama = [engineRun([decodeStep(0, 40, 4), decodeStep(40, 40, 4)], 2), engineRun([decodeStep(0, 20, 4)], 3)];
    const p = peerPoint('Llama-3.2-1B', 'q4_K', 4, cohort, llama);
    expect(p.cohort.tokensPerSec).toBe(200);
    expect(p.cohort.stepMs).toBe(20);
    expect(p.cohort.decodeCallsPerStep).toBeUndefined();
    expect(p.llama.tokensPerSec).toBe(150); // median of 100 and 200
    expect(p.llama.decodeCallsPerStep).toBeCloseTo(5 / 3);
    expect(p.ratio).toBeCloseTo(200 / 150);
    expect(peerPoint('m', 'q8_0', 1, cohort, []).ratio).toBeNull();
    expect(engineFigures([]).tokensPerSec).toBe(0);
  });
  it('says which llama.cpp build ran and renders every point', () => {
    const report: PeerBenchReport = {
      schema: 1, date: '2026-01-01', machine: 'm',
      cohort: { adapter: 'SwiftShader', backend: 'swiftshader', runtime: 'Node', kvCacheType: 'f16' },
      llama: { binding: 'node-llama-cpp 3.21.1', llamaCpp: 'r b1', requested: 'vulkan', backend: 'cpu', devices: [], fallback: 'its Vulkan build found no usable device', threads: 1, flashAttention: 'auto', kvCacheType: 'f16' },
      settings: { promptTokens: 8, decodeSteps: 4, warmUpSteps: 1, repeats: 1, batches: [1, 8] },
      models: [{ shape: 'SmolLM2-135M', dtype: 'q4_K', ggufBytes: 2 ** 20 * 77, matrixTypes: ['q4_0', 'q4_K'] }],
      points: [peerPoint('SmolLM2-135M', 'q4_K', 8, [engineRun([decodeStep(0, 80, 8)])], [engineRun([decodeStep(0, 40, 8)], 1)])],
      runtimeSeconds: 12,
    };
    const md = renderPeerMarkdown(report);
    expect(md).toContain('**CPU build, 1 thread** (asked for vulkan; its Vulkan build found no usable device)');
    expect(md).toContain('| SmolLM2-135M q4_K | 8 | 100 | 200 | 0.50x | 80.0 | 40.0 | 1.00 |');
    expect(md).toContain('| SmolLM2-135M q4_K | 77 | q4_0, q4_K |');
    const slow = peerPoint('SmolLM2-135M', 'q4_K', 1, [engineRun([decodeStep(0, 1000, 1)])], [engineRun([decodeStep(0, 12, 1)], 1)]);
    expect(renderPeerMarkdown({ ...report, points: [slow] })).toContain('| 0.012x |');
    const gpu = renderPeerMarkdown({ ...report, llama: { ...report.llama, backend: 'vulkan', devices: ['NVIDIA H200'], fallback: undefined } });
    expect(gpu).toContain('**Vulkan build on NVIDIA H200** (asked for vulkan)');
  });
});
