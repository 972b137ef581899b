// The CPU reference in llama.cpp's order held to llama.cpp (node-llama-cpp's prebuilt CPU binary) on
// synthetic and embedded GGUFs: greedy tokens and next-token distributions, bit-exact where emulated;
// and with f16 and q8_0 KV caches on both sides, within bounds.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getLlama, LlamaLogLevel, type Llama, type Token } from 'node-llama-cpp';
import { LlamaCppRunner } from './runner';
import type { LlamaCppEmulation } from './rounding';
import { argmax } from '../sample';
import { bytesSource } from '../../model/byte-source';
import { loadGgufModel } from '../../model/gguf-loader';
import type { Arch, DType } from '../../model/desc';
import type { KvCacheType } from '../../engine/kv-types';
import { hfToGguf } from '../../../tools/models/hf-to-gguf';
import { syntheticModel } from '../../model/testing/synthetic-model-fixtures';

const NUM_GENERATED = 40;
const PROMPT = Array.from({ length: 50 }, (_, i) => (i * 37 + 11) % 256);

interface Case {
  arch: Arch;
  dtype: DType;
  tied: boolean;
  /** The embedded default model's GGUF in this dtype, instead of a synthetic model. */
  embedded: boolean;
  /** The KV cache's storage type, in llama.cpp's context and in the reference's pool alike. */
  kv: KvCacheType;
}
const cases: Case[] = [];
for (const arch of ['llama', 'qwen2', 'qwen3'] as const) {
  for (const dtype of ['f32', 'q8_0', 'q4_0', 'q4_K'] as const) cases.push({ arch, dtype, tied: false, embedded: false, kv: 'f32' });
}
cases.push({ arch: 'qwen3', dtype: 'q8_0', tied: true, embedded: false, kv: 'f32' });
// gemma ties its embeddings (llama.cpp's gemma2 has no output tensor at all)
for (const arch of ['gemma2', 'gemma3'] as const) {
  for (const dtype of ['f32', 'q8_0'] as const) cases.push({ arch, dtype, tied: true, embedded: false, kv: 'f32' });
}
for (const dtype of ['f32', 'q8_0'] as const) cases.push({ arch: 'llama', dtype, tied: false, embedded: true, kv: 'f32' });
for (const kv of ['f16', 'q8_0'] as const) {
  cases.push({ arch: 'qwen2', dtype: 'f32', tied: false, embedded: false, kv });
  for (const dtype of ['f32', 'q8_0'] as const) cases.push({ arch: 'llama', dtype, tied: false, embedded: true, kv });
}
const EMBEDDED_DIR = fileURLToPath(new URL('../../../public/models/cohort-tiny/', import.meta.url));

/**
 * With the build the reference emulates exactly ('x86-amx': llama.cpp's sapphirerapids CPU
 * variant with its quantized layers in the AMX buffer), logits match bit for bit, so every token
 * must match and log-probabilities agree to float rounding (node-llama-cpp takes its own f32
 * softmax). On any other build only the 8-bit input rounding is emulated ('rounding'): most
 * steps agree to ~1e-6, but now and then a ~1e-7 difference in summation order flips one
 * rounding and moves a logit by up to ~0.07, so near-ties may part (bounded below).
 */
const EXACT_LOGPROB_TOLERANCE = 1e-4;
const ROUNDING_LOGPROB_TOLERANCE: Record<string, number> = { f32: 1e-3, q8_0: 0.3, q4_0: 0.3, q4_K: 0.3 };
/**
 * f16 and q8_0 KV: the emulation rounds what llama.cpp rounds around the cache (kv-attention.ts:
 * the write, Q to K's type, f16 softmax weights without flash attention) but sums attention in the
 * reference's order, so bounds, not bits. Measured on the x86-amx build: f16 <= 1e-3 everywhere;
 * q8_0 ~1e-5 on cohort-tiny but ~0.1 on the synthetic models (headDim 64). That part is llama.cpp's
 * flash attention (which it needs for a q8_0 V cache), not the storage: with our side's cache left
 * unrounded the gap stays ~0.1, and flash attention alone over an f32 cache moves the synthetic
 * qwen2 by ~1e-2. Hence the q8_0 bound of the rounding-only level.
 */
const KV_LOGPROB_TOLERANCE: Record<Exclude<KvCacheType, 'f32'>, number> = { f16: 5e-3, q8_0: 0.3 };
/** llama.cpp's names of the KV cache types (GgmlType keys). */
const LLAMA_KV_TYPE = { f32: 'F32', f16: 'F16', q8_0: 'Q8_0' } as const;

interface LlamaStep {
  token: number;
  /** token id -> probability of the next token, at temperature 0 the plain softmax */
  probabilities: Map<Token, number>;
}

const summary: string[] = [];
let llama: Llama;
let dir: string;
/** llama.cpp's log lines (debug level): they name the CPU variant loaded and the buffers used. */
const llamaLog: string[] = [];

beforeAll(async () => {
  // The prebuilt CPU binary only: never download or compile.
  llama = await getLlama({
    gpu: false,
    build: 'never',
    logLevel: LlamaLogLevel.debug,
    logger: (_level, message) => void llamaLog.push(message),
    progressLogs: false,
  });
  dir = mkdtempSync(join(tmpdir(), 'cohort-oracle-'));
}, 120_000);

/**
 * The emulation that fits the llama.cpp build at work for a model: 'x86-amx' when the
 * sapphirerapids CPU variant is loaded and, for a quantized model, put its layers in the AMX
 * buffer (its log names an AMX model buffer). `modelLog`: the lines logged while it was in use.
 */
function emulationFor(dtype: DType, modelLog: string[]): LlamaCppEmulation {
  const variant = llamaLog.join('\n').match(/libggml-cpu-([\w-]+)\.so/)?.[1];
  const amx = dtype === 'f32' || modelLog.some((line) => /AMX model buffer size/.test(line));
  return variant === 'sapphirerapids' && amx ? 'x86-amx' : 'rounding';
}

afterAll(async () => {
  await llama?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
  console.log(`llama.cpp oracle (${NUM_GENERATED} greedy tokens after a ${PROMPT.length}-token prompt):\n${summary.join('\n')}`);
});

/** llama.cpp's free-running greedy generation, with the full distribution at every step. */
async function llamaCppGreedy(path: string, dtype: DType, kv: KvCacheType): Promise<{ steps: LlamaStep[]; emulation: LlamaCppEmulation }> {
  const logStart = llamaLog.length;
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({
    contextSize: 256,
    batchSize: 256,
    threads: 2,
    flashAttention: kv === 'q8_0', // llama.cpp stores a quantized V cache only with flash attention
    experimentalKvCacheKeyType: LLAMA_KV_TYPE[kv],
    experimentalKvCacheValueType: LLAMA_KV_TYPE[kv],
  });
  const steps: LlamaStep[] = [];
  try {
    const sequence = context.getSequence();
    // Token by token rather than sequence.evaluate(), which would stop at an end-of-generation token.
    const generateNext = { token: true, probabilities: true, options: { temperature: 0 } };
    let input: Array<Token | [Token, { generateNext: typeof generateNext }]> = PROMPT.map((id) => id as Token);
    input[input.length - 1] = [PROMPT[PROMPT.length - 1] as Token, { generateNext }];
    while (steps.length < NUM_GENERATED) {
      const outputs = await sequence.controlledEvaluate(input);
      const next = outputs[input.length - 1]?.next;
      if (next?.token == null || !next.probabilities) throw new Error('llama.cpp returned no next token');
      steps.push({ token: next.token, probabilities: next.probabilities });
      input = [[next.token, { generateNext }]];
    }
  } finally {
    await context.dispose();
    await model.dispose();
  }
  return { steps, emulation: emulationFor(dtype, llamaLog.slice(logStart)) };
}

describe.each(cases)('the emulation vs llama.cpp: $arch $dtype (tied: $tied, embedded model: $embedded), $kv KV', ({ arch, dtype, tied, embedded, kv }) => {
  it('agrees on greedy tokens and next-token distributions', async () => {
    let path = join(EMBEDDED_DIR, `cohort-tiny-${dtype}.gguf`);
    let bytes: Uint8Array;
    if (embedded) bytes = readFileSync(path);
    else {
      bytes = hfToGguf(syntheticModel({ arch, seed: 1, tieWordEmbeddings: tied }), dtype);
      path = join(dir, `${arch}-${dtype}-${tied ? 'tied' : 'untied'}.gguf`);
      writeFileSync(path, bytes);
    }
    const { steps: reference, emulation: build } = await llamaCppGreedy(path, dtype, kv);
    // gemma's scoring (window, caps, scale) runs in the reference's order at every level (weights.ts): never bit-exact
    const emulation: LlamaCppEmulation = arch === 'gemma2' || arch === 'gemma3' ? 'rounding' : build;
    expect(reference).toHaveLength(NUM_GENERATED);

    const { desc } = await loadGgufModel(bytesSource(path, bytes));
    const runner = new LlamaCppRunner(desc, emulation, { blockSize: 16, numBlocks: 16, kvCacheType: kv });
    const blockTable = Int32Array.of(9, 3, 14, 1, 7, 2, 11); // 112 positions, scattered
    const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0 };

    // Teacher-forced: feed llama.cpp's own tokens so one near-tie cannot derail the rest.
    let fed = Int32Array.from(PROMPT);
    let pos = 0;
    let commonPrefix = -1;
    let maxLogprobError = 0;
    let stepMap = '';
    const disagreements: Array<{ index: number; ours: number; want: number; gap: number }> = [];
    for (let i = 0; i < NUM_GENERATED; i++) {
      const step = runner.executeDetailed({
        stepIndex: i,
        rows: [{ sessionId: 'a', tokenIds: fed, startPos: pos, blockTables: [blockTable], sampling: greedy, sample: true }],
      });
      pos += fed.length;
      const logits = step.logits; // [vocab]
      const ours = argmax(logits);
      expect(step.sampledIds[0]).toBe(ours);
      const want = reference[i].token;
      if (ours !== want) {
        if (commonPrefix < 0) commonPrefix = i;
        disagreements.push({ index: i, ours, want, gap: logits[ours] - logits[want] });
      }

      const max = logits[ours];
      const logSumExp = max + Math.log(logits.reduce((s, l) => s + Math.exp(l - max), 0));
      let stepError = 0;
      for (const [token, p] of reference[i].probabilities) {
        if (p > 1e-4) stepError = Math.max(stepError, Math.abs(Math.log(p) - (logits[token] - logSumExp)));
      }
      maxLogprobError = Math.max(maxLogprobError, stepError);
      stepMap += stepError < 1e-4 ? '.' : stepError < 1e-2 ? 'o' : 'X';
      fed = Int32Array.of(want);
    }
    if (commonPrefix < 0) commonPrefix = NUM_GENERATED;
    summary.push(
      `  ${embedded ? 'cohort-tiny' : arch} ${dtype}${tied ? ' tied' : ''}, ${kv} KV (${emulation}): ${NUM_GENERATED - disagreements.length}/${NUM_GENERATED} teacher-forced tokens equal, ` +
        `free-running greedy equal for the first ${commonPrefix}, max |dlogp| ${maxLogprobError.toExponential(2)}, steps ${stepMap}` +
        disagreements.map((d) => `; #${d.index}: ours ${d.ours}, llama.cpp ${d.want}, our logit gap ${d.gap.toFixed(4)}`).join(''),
    );

    if (kv !== 'f32') {
      const bound = emulation === 'x86-amx' ? KV_LOGPROB_TOLERANCE[kv] : Math.max(KV_LOGPROB_TOLERANCE[kv], ROUNDING_LOGPROB_TOLERANCE[dtype]);
      expect(maxLogprobError).toBeLessThan(bound);
      expect(disagreements.length).toBeLessThanOrEqual(3);
      for (const d of disagreements) expect(d.gap).toBeLessThan(bound);
      return;
    }
    if (emulation === 'x86-amx' || dtype === 'f32') {
      // Every teacher-forced token equal, so the free-running greedy runs are equal throughout.
      expect(disagreements).toEqual([]);
      expect(commonPrefix).toBe(NUM_GENERATED);
    }
    if (emulation === 'x86-amx') {
      expect(maxLogprobError).toBeLessThan(EXACT_LOGPROB_TOLERANCE);
    } else {
      console.log(`${arch} ${dtype}: llama.cpp's build here is not the one emulated exactly; checking with the rounding-only bounds`);
      expect(maxLogprobError).toBeLessThan(ROUNDING_LOGPROB_TOLERANCE[dtype]);
      // A disagreement is only allowed at a near-tie, and must stay rare.
      expect(disagreements.length).toBeLessThanOrEqual(3);
      for (const d of disagreements) expect(d.gap).toBeLessThan(ROUNDING_LOGPROB_TOLERANCE[dtype]);
    }
  }, 180_000);
});
