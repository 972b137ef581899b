// What both benchmark grids run and read: greedy turns of a workload's prompts, the runner of one
// workload, and one run's figures. No measuring plan (grid.ts, speculation-grid.ts) and no files.
import type { SessionOptions } from '../src/protocol/api';
import { decodeThroughput, median } from '../src/protocol/metrics';
import type { RunRecord, RunRequest } from '../testing/harness/driver';
import { timesToFirstToken } from './metrics';
import type { RunSummary, Workload } from './report';
import { chatPrompts, niahPrompts, type BenchSettings } from './settings';

/** Runs one workload to its end and returns its turns and steps (the page's or Node's driver). */
export type RunWorkload = (request: RunRequest) => Promise<RunRecord>;

/**
 * Greedy turns that run their full length, as vLLM's benchmark does (EOS would end turns unevenly).
 * Speculation off unless `speculate`: this grid measures batching, one token per row-step on both
 * paths, as earlier reports did; speculate leaves the engine's default (auto) for speculation-grid.ts.
 */
export function greedy(maxNewTokens: number, speculate = false): SessionOptions {
  return { sampling: { temperature: 0 }, maxNewTokens, ignoreEos: true, ...(speculate ? {} : { speculation: 'off' as const }) };
}

/** A workload's n prompts, each with its NIAH code ('' for chat), and its new tokens per turn. */
export function workloadPrompts(settings: BenchSettings, workload: Workload, n: number, maxNewTokens?: number): { prompts: Array<{ prompt: string; code: string }>; newTokens: number } {
  const prompts = workload === 'chat' ? chatPrompts(n).map((prompt) => ({ prompt, code: '' })) : niahPrompts(n);
  return { prompts, newTokens: maxNewTokens ?? (workload === 'chat' ? settings.chatNewTokens : settings.niahNewTokens) };
}

/** One run's figures: decode throughput over its decode-only steps, TTFT, sizes. */
export function summarize(run: RunRecord, repeat: number): RunSummary {
  const turns = run.turns.map((t) => t.result);
  return {
    repeat,
    ...decodeThroughput(run.steps),
    medianTimeToFirstTokenMs: median(timesToFirstToken(run)),
    meanPromptTokens: turns.reduce((n, t) => n + t.promptTokenIds.length, 0) / turns.length,
    meanNewTokens: turns.reduce((n, t) => n + t.outputTokenIds.length, 0) / turns.length,
    wallMs: run.wallMs,
  };
}
