// Turns one poll of a server's /slots and /metrics into a ServerSample: gauges as read, counters as
// the increase since the previous poll. Pure; the names are llama.cpp's and vLLM's documented ones.
import type { ServerKind, ServerSample, ServerSlot } from '../protocol/server';
import { firstMetric, metricSum, type PromSample } from './prometheus';

/** Cumulative counters kept between polls, so a sample reports what happened in its interval. */
export interface ServerCounters {
  numDecodeCalls?: number;
  numIterationTokens?: number;
  numGenerated?: number;
}

/** llama.cpp's Prometheus names (tools/server: "llamacpp:" + name). */
const LLAMA = {
  processing: 'llamacpp:requests_processing',
  deferred: 'llamacpp:requests_deferred',
  busyPerDecode: 'llamacpp:n_busy_slots_per_decode',
  decodeCalls: 'llamacpp:n_decode_total',
  generated: 'llamacpp:tokens_predicted_total',
};

/** vLLM's names; KV usage was gpu_cache_usage_perc before the V1 engine renamed it. */
const VLLM = {
  running: 'vllm:num_requests_running',
  waiting: 'vllm:num_requests_waiting',
  kvUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  iterationCount: 'vllm:iteration_tokens_total_count',
  iterationSum: 'vllm:iteration_tokens_total_sum',
  generated: 'vllm:generation_tokens_total',
};

/** /slots as llama-server answers it: one object per slot. */
export function parseSlots(json: unknown): ServerSlot[] {
  if (!Array.isArray(json)) throw new Error('/slots did not answer a list of slots');
  return json.map((slot: Record<string, unknown>) => {
    const next = Array.isArray(slot.next_token) ? (slot.next_token[0] as Record<string, unknown> | undefined) : undefined;
    return {
      id: Number(slot.id),
      isProcessing: Boolean(slot.is_processing),
      numCtx: Number(slot.n_ctx ?? 0),
      numPromptTokens: optionalNumber(slot.n_prompt_tokens),
      numPromptTokensProcessed: optionalNumber(slot.n_prompt_tokens_processed),
      numPromptTokensCached: optionalNumber(slot.n_prompt_tokens_cache),
      numDecoded: optionalNumber(next?.n_decoded),
    };
  });
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export interface PollResult {
  sample: ServerSample;
  counters: ServerCounters;
}

/** One sample from what the poll read (either part may be missing) and the counters of the previous poll. */
export function sampleFromPoll(kind: ServerKind, poll: { metrics?: PromSample[]; slots?: ServerSlot[]; errors: string[] }, previous: ServerCounters): PollResult {
  const sample: ServerSample = { kind, sampled: true };
  const counters: ServerCounters = {};
  const m = poll.metrics;
  if (m && kind === 'llama.cpp') {
    sample.numBusy = metricSum(m, LLAMA.processing);
    sample.numDeferred = metricSum(m, LLAMA.deferred);
    sample.meanBusyPerDecode = metricSum(m, LLAMA.busyPerDecode);
    counters.numDecodeCalls = metricSum(m, LLAMA.decodeCalls);
    counters.numGenerated = metricSum(m, LLAMA.generated);
  } else if (m && kind === 'vllm') {
    sample.numBusy = metricSum(m, VLLM.running);
    sample.numDeferred = metricSum(m, VLLM.waiting);
    sample.kvCacheUsage = firstMetric(m, VLLM.kvUsage);
    counters.numDecodeCalls = metricSum(m, VLLM.iterationCount);
    counters.numIterationTokens = metricSum(m, VLLM.iterationSum);
    counters.numGenerated = metricSum(m, VLLM.generated);
  }
  sample.numDecodeCalls = increase(previous.numDecodeCalls, counters.numDecodeCalls);
  sample.numIterationTokens = increase(previous.numIterationTokens, counters.numIterationTokens);
  sample.numGenerated = increase(previous.numGenerated, counters.numGenerated);
  if (poll.slots) {
    sample.slots = poll.slots;
    sample.numSlots = poll.slots.length;
    // /slots is read at the same moment as the streams: it says who is busy more exactly than a gauge
    sample.numBusy = poll.slots.filter((s) => s.isProcessing).length;
  }
  if (poll.errors.length > 0) sample.errors = poll.errors;
  for (const key of Object.keys(sample) as Array<keyof ServerSample>) if (sample[key] === undefined) delete sample[key];
  return { sample, counters: { ...previous, ...definedOnly(counters) } };
}

/** A counter's rise since the last poll; a restart (counter fell) or a first poll reports nothing. */
function increase(before: number | undefined, now: number | undefined): number | undefined {
  if (before === undefined || now === undefined || now < before) return undefined;
  return now - before;
}

function definedOnly(counters: ServerCounters): ServerCounters {
  return Object.fromEntries(Object.entries(counters).filter(([, v]) => v !== undefined)) as ServerCounters;
}
