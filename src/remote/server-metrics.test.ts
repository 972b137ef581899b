// The metric readers on recorded /metrics and /slots texts: llama.cpp's as the built server answers
// (src/remote/testing/llama-cpp-*.txt|json), vLLM's written from its documented names (not run here).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { metricSum, parsePrometheus } from './prometheus';
import { parseSlots, sampleFromPoll } from './server-metrics';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) => readFileSync(path.join(here, 'testing', name), 'utf8');

describe('parsePrometheus', () => {
  it('reads names, labels and values, skipping comments and junk lines', () => {
    const samples = parsePrometheus('# HELP x y\nfoo{a="1",b="q\\"x"} 2.5\nnot a metric line\nbar 3e2 1700000000\nbaz +Inf\n');
    expect(samples).toEqual([
      { name: 'foo', labels: { a: '1', b: 'q"x' }, value: 2.5 },
      { name: 'bar', labels: {}, value: 300 },
      { name: 'baz', labels: {}, value: Infinity },
    ]);
  });

  it('sums a metric over its label sets', () => {
    const samples = parsePrometheus(fixture('vllm-metrics.txt'));
    expect(metricSum(samples, 'vllm:request_success_total')).toBe(48);
    expect(metricSum(samples, 'vllm:absent')).toBeUndefined();
  });
});

describe('vLLM /metrics', () => {
  it('gives running, waiting, KV usage, and per-interval step and token counts', () => {
    const text = fixture('vllm-metrics.txt');
    const first = sampleFromPoll('vllm', { metrics: parsePrometheus(text), errors: [] }, {});
    expect(first.sample).toEqual({ kind: 'vllm', sampled: true, numBusy: 6, numDeferred: 2, kvCacheUsage: 0.4375 });
    // a later poll: 10 more engine steps carrying 64 tokens, 60 of them generated
    const later = text
      .replace('iteration_tokens_total_count{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"} 250.0', 'iteration_tokens_total_count{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"} 260.0')
      .replace('11396.0', '11460.0')
      .replace('generation_tokens_total{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"} 1520.0', 'generation_tokens_total{engine="0",model_name="Qwen/Qwen2.5-0.5B-Instruct"} 1580.0');
    const second = sampleFromPoll('vllm', { metrics: parsePrometheus(later), errors: [] }, first.counters);
    expect(second.sample).toMatchObject({ numDecodeCalls: 10, numIterationTokens: 64, numGenerated: 60 });
  });

  it('reads the KV gauge under its pre-V1 name too', () => {
    const old = fixture('vllm-metrics.txt').replaceAll('kv_cache_usage_perc', 'gpu_cache_usage_perc');
    expect(sampleFromPoll('vllm', { metrics: parsePrometheus(old), errors: [] }, {}).sample.kvCacheUsage).toBe(0.4375);
  });

  it('a restarted server (counters fell) reports no interval counts instead of negative ones', () => {
    const samples = parsePrometheus(fixture('vllm-metrics.txt'));
    const result = sampleFromPoll('vllm', { metrics: samples, errors: [] }, { numDecodeCalls: 1e6, numGenerated: 1e6, numIterationTokens: 1e6 });
    expect(result.sample.numDecodeCalls).toBeUndefined();
    expect(result.sample.numGenerated).toBeUndefined();
  });
});

describe('llama.cpp /metrics and /slots', () => {
  it('gives processing and deferred requests, busy slots per decode, and the interval counts', () => {
    const samples = parsePrometheus(fixture('llama-cpp-metrics.txt'));
    const { sample, counters } = sampleFromPoll('llama.cpp', { metrics: samples, errors: [] }, {});
    expect(sample.numBusy).toBeGreaterThanOrEqual(0);
    expect(sample.numDeferred).toBe(0);
    expect(sample.meanBusyPerDecode).toBeGreaterThan(1);
    expect(counters.numDecodeCalls).toBeGreaterThan(0);
    expect(counters.numGenerated).toBeGreaterThan(0);
  });

  it('reads each slot, and /slots decides who is busy', () => {
    const slots = parseSlots(JSON.parse(fixture('llama-cpp-slots.json')));
    expect(slots.length).toBeGreaterThan(1);
    expect(slots[0]).toMatchObject({ id: 0, numCtx: expect.any(Number) });
    expect(slots.some((s) => s.isProcessing)).toBe(true);
    const { sample } = sampleFromPoll('llama.cpp', { slots, errors: ['/metrics: timed out'] }, {});
    expect(sample.numBusy).toBe(slots.filter((s) => s.isProcessing).length);
    expect(sample.numSlots).toBe(slots.length);
    expect(sample.errors).toEqual(['/metrics: timed out']);
  });

  it('refuses a /slots answer that is not a list', () => {
    expect(() => parseSlots({ error: 'nope' })).toThrow(/list of slots/);
  });
});
