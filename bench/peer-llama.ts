// llama.cpp's side of the peer benchmark, through node-llama-cpp's prebuilt binaries: its Vulkan build where it
// finds a device, else its CPU build; N sequences decoding in step, one llama_decode per step. Never builds or downloads.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { getLlama, LlamaLogLevel, type Llama, type LlamaContext, type LlamaModel, type Token } from 'node-llama-cpp';
import type { MeasuredStep } from '../src/protocol/metrics';
import { engineRun, type EngineRun } from './peer-report';

export interface LlamaPeer {
  llama: Llama;
  requested: 'vulkan' | 'cpu';
  backend: 'vulkan' | 'cpu';
  devices: string[];
  fallback?: string;
}

/** No network where the pack runs: only binaries already on disk, never a build or a download. */
const OFFLINE = { build: 'never', skipDownload: true, usePrebuiltBinaries: true, progressLogs: false, logLevel: LlamaLogLevel.error } as const;

/**
 * The Vulkan build if asked and it sees a device, else the CPU build. node-llama-cpp loads the Vulkan
 * build wherever a Vulkan loader and driver exist; a loader whose drivers are all CPU devices (SwiftShader,
 * which ggml's Vulkan backend skips) yields no device, and llama.cpp would silently run on its CPU
 * backend inside the Vulkan build, so that case takes the CPU build by name instead.
 */
export async function openLlamaPeer(requested: 'vulkan' | 'cpu'): Promise<LlamaPeer> {
  let fallback: string | undefined;
  if (requested === 'vulkan') {
    try {
      const llama = await getLlama({ ...OFFLINE, gpu: 'vulkan' });
      const devices = await llama.getGpuDeviceNames();
      if (llama.gpu === 'vulkan' && devices.length > 0) return { llama, requested, backend: 'vulkan', devices };
      fallback = `its Vulkan build found no usable device (gpu: ${String(llama.gpu)}, devices: ${devices.length})`;
      await llama.dispose();
    } catch (error) {
      fallback = `its Vulkan build did not load: ${(error instanceof Error ? `${error.name}: ${error.message}` : String(error)).split('\n')[0]}`;
    }
  }
  const llama = await getLlama({ ...OFFLINE, gpu: false });
  return { llama, requested, backend: 'cpu', devices: [], ...(fallback ? { fallback } : {}) };
}

/** node-llama-cpp's version, read beside its entry point (its exports do not list package.json). */
export function bindingVersion(): string {
  try {
    const entry = createRequire(import.meta.url).resolve('node-llama-cpp');
    return (JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export interface LlamaRunSpec {
  batch: number;
  /** Each sequence's prompt, the same ids Cohort is fed. */
  prompts: number[][];
  warmUpSteps: number;
  decodeSteps: number;
}

/**
 * Counts llama_decode calls on a context: node-llama-cpp's batch loop calls its native context's
 * decodeBatch once per llama_decode. The native object's methods are read-only, so the context's
 * (internal, at the pinned version) handle to it is swapped for a counting proxy; undefined if the name moves.
 */
function countDecodes(context: LlamaContext): (() => number) | undefined {
  const holder = context as unknown as { _ctx?: object };
  const native = holder._ctx as { decodeBatch?: (...args: unknown[]) => unknown } | undefined;
  if (!native || typeof native.decodeBatch !== 'function') return undefined;
  let calls = 0;
  holder._ctx = new Proxy(native, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      if (key === 'decodeBatch') calls++;
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return () => calls;
}

const GREEDY = { generateNext: { token: true, options: { temperature: 0 } } } as const;

/**
 * One run: a context of exactly `batch` sequences (node-llama-cpp dispatches a batch at once when
 * every sequence of its context has queued, so a step's tokens are one llama_decode), each
 * sequence's prompt, then every step feeds each sequence's sampled token back (greedy; end-of-turn
 * tokens are fed like any other, so every run decodes the same count). Timed: the decode steps,
 * each from queuing the batch's tokens to every sequence's sampled token.
 */
export async function llamaRun(model: LlamaModel, spec: LlamaRunSpec, contextPerSequence: number, batchSize: number, threads?: number): Promise<EngineRun> {
  const context = await model.createContext({ sequences: spec.batch, contextSize: contextPerSequence, batchSize, ...(threads ? { threads } : {}) });
  try {
    const sequences = Array.from({ length: spec.batch }, () => context.getSequence());
    // node-llama-cpp brands token ids; these are plain vocabulary ids
    const token = (id: number): Token => id as Token;
    const first = await Promise.all(sequences.map((s, i) => s.controlledEvaluate(spec.prompts[i]!.map((t, j, all) => (j === all.length - 1 ? [token(t), GREEDY] : token(t))))));
    let next: number[] = first.map((out) => out[out.length - 1]?.next?.token ?? 0);
    const step = async (): Promise<void> => {
      const outs = await Promise.all(sequences.map((s, i) => s.controlledEvaluate([[token(next[i]!), GREEDY]])));
      next = outs.map((out) => out[0]?.next?.token ?? 0);
    };
    for (let i = 0; i < spec.warmUpSteps; i++) await step();
    const decodes = countDecodes(context);
    const before = decodes?.() ?? 0;
    const steps: MeasuredStep[] = [];
    for (let i = 0; i < spec.decodeSteps; i++) {
      const startedAtMs = performance.now();
      await step();
      steps.push({ startedAtMs, elapsedMs: performance.now() - startedAtMs, rows: next.map((t, r) => ({ sessionId: `s${r}`, kind: 'decode' as const, numTokens: 1, newTokenIds: [t] })) });
    }
    return engineRun(steps, decodes ? decodes() - before : undefined);
  } finally {
    await context.dispose();
  }
}
