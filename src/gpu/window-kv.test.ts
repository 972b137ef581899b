// GpuRunner's sliding-window KV cache group: gemma's sliding layers in an arena of their own, read
// and written only through each row's table of that group, whose out-of-window blocks the engine gives
// back. Held, through EngineCore, to the same runner keeping every position in one group (logits bitwise
// equal at every position, every free sliding-group block poisoned with NaN before each step) and to CpuRunner's, and
// verify rows over it to plain decode.
// Not the kernels' parity (their own tests) nor the engine's block accounting (src/engine).
import { describe, expect, it } from 'vitest';
import { syntheticModelDesc, SYNTH_SLIDING_WINDOW, type SynthDims } from '../model/testing/synthetic-model-fixtures';
import { EngineCore } from '../engine/engine-core';
import type { StepEvent } from '../engine/events';
import type { Speculation } from '../engine/speculation';
import { promptTokens } from '../engine/testing/test-engine';
import { logitsDifference, recomputesAndHits, servePrompts, type TimedPrompt } from '../engine/testing/serve-prompts';
import { slidingGroupBlocks, type ChatMessage, type ChatTemplate, type Tokenizer } from '../engine/types';
import type { Arch, ModelDesc } from '../model/desc';
import type { KvCacheType } from '../engine/kv-types';
import { CpuRunner } from '../reference/cpu-runner';
import { GpuRunner, type GpuRunnerOptions } from './gpu-runner';
import { kvLayerLayout, KV_VALUES_PER_WORD, type KvArena } from './kv-arena';
import { testPipelineCache } from './testing/kernel-harness';
import { loadShader, kernelSettingFromEnv } from './testing/node-gpu';
import { RecordingRunner } from './testing/recording-runner';

const VOCAB = 61;
/** Three layers: sliding, global, sliding (two layers in the sliding group's arena, one in the first group's); kvDim 32 (q8_0 blocks). */
const DIMS: Partial<SynthDims> = { hidden: 32, intermediate: 48, layers: 3, heads: 4, kvHeads: 2, headDim: 16, vocab: VOCAB };
const BLOCK_SIZE = 4;
const MAX_ROWS = 4;
const MAX_TOKENS = 40;
const tokenizer: Tokenizer = { eosTokenIds: [], encode: (text) => Array.from(text, (ch) => ch.charCodeAt(0) % VOCAB), decode: (ids) => Array.from(ids, (id) => String.fromCharCode(48 + id)).join('') };
const template: ChatTemplate = { render: (messages: ChatMessage[]) => messages.map((m) => m.content).join('') };
const prompt = (length: number, salt: number): number[] => promptTokens(length, salt, VOCAB, 0);
const gemma = (arch: Arch): ModelDesc => syntheticModelDesc({ arch, seed: 9, tieWordEmbeddings: true, dims: DIMS });

interface RunnerOptions {
  windowKv: boolean;
  numBlocks: number;
  kvCacheType: KvCacheType;
}

async function gpuRunner(model: ModelDesc, o: Partial<GpuRunnerOptions>): Promise<GpuRunner> {
  const pipelines = await testPipelineCache();
  return GpuRunner.create({ device: pipelines.device, pipelines, model, shaderSource: loadShader, blockSize: BLOCK_SIZE, maxTokensPerStep: MAX_TOKENS, maxRows: MAX_ROWS, maxDraftTokens: 0, maxContext: 128, kernels: kernelSettingFromEnv(), ...o });
}

/**
 * The recording runner, with `poison`: every free window block NaN before each step, the prefix
 * cache's too (a step may read no free block, cached or not), and the cached ones' K/V put back
 * after it (a later prefix hit may take them again).
 */
class PoisoningRunner extends RecordingRunner {
  engine?: EngineCore;
  /** Window-block poisonings so far (the test expects some). */
  poisoned = 0;
  /** Copies of the window arena's buffers, taken before each step's poisoning. */
  private shadows: GPUBuffer[] = [];
  /** The free blocks the prefix cache holds, poisoned for the step under way. */
  private cached: number[] = [];

  constructor(
    runner: GpuRunner | CpuRunner,
    private readonly poison: boolean,
  ) {
    super(runner, { logits: true });
  }

  // before the step: what the engine freed after the last one must never be read again
  protected override beforeStep(): void {
    this.cached = this.poison ? this.poisonFreeWindowBlocks() : [];
  }

  protected override afterStep(): void {
    if (this.cached.length > 0) this.restore(this.cached);
  }

  override dispose(): void {
    for (const shadow of this.shadows) shadow.destroy();
    super.dispose();
  }

  private get gpu(): GpuRunner {
    return this.runner as GpuRunner;
  }

  /** The sliding-window group's arena: the GPU's second. */
  private get arena(): KvArena {
    return this.gpu.kv.arenas[1]!;
  }

  /** [word offset, words] in a window layer's binding of block id's K, V (and q8_0 scale) words. */
  private regions(id: number): Array<[number, number]> {
    const { blockSize, kvDim, kvCacheType: type } = this.arena.shape;
    const layout = kvLayerLayout(type, this.arena.numBlocks * blockSize, kvDim);
    const valueWords = (blockSize * kvDim) / KV_VALUES_PER_WORD[type]; // one block's K (or V) words
    const regions: Array<[number, number]> = [
      [id * valueWords, valueWords],
      [layout.vOffsetWords + id * valueWords, valueWords],
    ];
    if (type === 'q8_0') regions.push([layout.scalesOffsetWords + (id * blockSize * kvDim) / 32, (blockSize * kvDim) / 32]);
    return regions;
  }

  /**
   * NaN bits (all ones: f32 NaN, f16 NaN pairs, q8_0 NaN scales) over every free window block of
   * every window layer, after copying the arena aside; returns the free blocks the prefix cache holds.
   */
  private poisonFreeWindowBlocks(): number[] {
    const { device } = this.gpu;
    const arena = this.arena;
    const pool = this.engine!.kv.groups[1]!.pool;
    if (this.shadows.length === 0) this.shadows = arena.buffers.map((b) => device.createBuffer({ label: `${b.label}-shadow`, size: b.size, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST }));
    const encoder = device.createCommandEncoder();
    arena.buffers.forEach((b, i) => encoder.copyBufferToBuffer(b, 0, this.shadows[i]!, 0, b.size));
    device.queue.submit([encoder.finish()]);
    const nan = new Uint32Array(this.regions(1)[0]![1]).fill(0xffffffff);
    const cached: number[] = [];
    for (let id = 1; id < arena.numBlocks; id++) {
      if (pool.refCount(id) > 0) continue;
      if (pool.isCached(id)) cached.push(id);
      for (let l = 0; l < arena.shape.numLayers; l++) {
        const { buffer, offset } = arena.layerBinding(l);
        for (const [word, n] of this.regions(id)) device.queue.writeBuffer(buffer, offset + word * 4, nan, 0, n);
      }
      this.poisoned++;
    }
    return cached;
  }

  /** The cached blocks' words back from the copy taken before the step (no step writes a free block). */
  private restore(ids: number[]): void {
    const arena = this.arena;
    const encoder = this.gpu.device.createCommandEncoder();
    for (const id of ids) {
      for (let l = 0; l < arena.shape.numLayers; l++) {
        const { buffer, offset } = arena.layerBinding(l);
        const shadow = this.shadows[arena.buffers.indexOf(buffer)]!;
        for (const [word, n] of this.regions(id)) encoder.copyBufferToBuffer(shadow, offset + word * 4, buffer, offset + word * 4, n * 4);
      }
    }
    this.gpu.device.queue.submit([encoder.finish()]);
  }
}

interface Run {
  logits: Map<string, Float32Array>;
  outputs: number[][];
  events: StepEvent[];
  /** Window blocks poisoned over the run. */
  poisoned: number;
}

/** Serves `prompts` (arriving at the given steps) through EngineCore on `runner`. */
async function serve(runner: GpuRunner | CpuRunner, prompts: TimedPrompt[], poison: boolean, speculation?: Speculation): Promise<Run> {
  const recording = new PoisoningRunner(runner, poison);
  const served = await servePrompts(recording, prompts, { tokenizer, chatTemplate: template, maxTokensPerStep: 24, maxRows: MAX_ROWS, maxNewTokens: 30, speculation, onEngine: (engine) => (recording.engine = engine) });
  return { logits: recording.logits, ...served, poisoned: recording.poisoned }; // the engine disposed the runner
}

async function serveGpu(arch: Arch, prompts: TimedPrompt[], o: RunnerOptions): Promise<Run> {
  const gpu = await gpuRunner(gemma(arch), o);
  expect(gpu.kvGroups.length).toBe(o.windowKv ? 2 : 1);
  return serve(gpu, prompts, o.windowKv);
}

function expectSameLogits(freed: Run, kept: Run): void {
  expect(logitsDifference(freed.logits, kept.logits)).toBeNull();
  expect(freed.outputs).toEqual(kept.outputs);
}


const shared = prompt(30, 3);
/** Four sessions, two sharing a 30-token prefix, arriving at steps 0, 0, 3 and 6. */
const cohort = [
  { tokens: prompt(38, 2), arriveAt: 0 },
  { tokens: [...shared, ...prompt(9, 4)], arriveAt: 0 },
  { tokens: [...shared, ...prompt(14, 5)], arriveAt: 6 },
  { tokens: prompt(20, 6), arriveAt: 3 },
];

describe('GpuRunner sliding-window group', () => {
  it("sizes the sliding group's arena as the engine relies on and the first group's from the rest; refuses rows without its table", async () => {
    const gpu = await gpuRunner(gemma('gemma2'), { windowKv: true, numBlocks: 41, kvCacheType: 'f16' });
    const kept = await gpuRunner(gemma('gemma2'), { windowKv: false, numBlocks: 41, kvCacheType: 'f16' });
    try {
      expect(gpu.kvGroups).toEqual([
        { numBlocks: 41, window: null },
        { numBlocks: slidingGroupBlocks(SYNTH_SLIDING_WINDOW, BLOCK_SIZE, MAX_ROWS, MAX_TOKENS), window: SYNTH_SLIDING_WINDOW },
      ]);
      expect([gpu.numBlocks, gpu.kv.arenas[1]!.numBlocks, gpu.kv.arenas[1]!.shape.numLayers, gpu.kv.arenas[0]!.shape.numLayers]).toEqual([41, gpu.kvGroups[1]!.numBlocks, 2, 1]);
      expect(gpu.kv.layerGroup).toEqual([1, 0, 1]);
      expect([kept.kvGroups, kept.kv.arenas.length, kept.kv.arenas[0]!.shape.numLayers]).toEqual([[{ numBlocks: 41, window: null }], 1, 3]);
      expect(gpu.dispatchLabels).toEqual(kept.dispatchLabels);
      const row = { sessionId: 'a', tokenIds: Int32Array.of(1, 2), startPos: 0, blockTables: [Int32Array.of(1)], sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 }, sample: true };
      await expect(gpu.execute({ stepIndex: 0, rows: [row] })).rejects.toThrow(/row a: 1 block tables, but the runner keeps 2 KV cache groups/);
      await expect(gpu.execute({ stepIndex: 0, rows: [{ ...row, blockTables: [Int32Array.of(1), Int32Array.of(gpu.kvGroups[1]!.numBlocks)] }] })).rejects.toThrow(/KV block \d+ of KV cache group 1/);
      expect((await gpu.execute({ stepIndex: 0, rows: [{ ...row, blockTables: [Int32Array.of(1), Int32Array.of(1)] }] })).sampledIds).toHaveLength(1);
    } finally {
      gpu.dispose();
      kept.dispose();
    }
  });

  it('keeps one group for a model with no sliding layer, and when the KV budget cannot pay for the sliding group', async () => {
    const llama = await gpuRunner(syntheticModelDesc({ arch: 'llama', seed: 9, dims: DIMS }), { numBlocks: 41 });
    expect([llama.kvGroups, llama.kv.arenas.length, llama.kvNote]).toEqual([[{ numBlocks: 41, window: null }], 1, undefined]);
    llama.dispose();
    // f16, kvDim 32, blocks of 4: 512 bytes a block and layer; the sliding group alone needs 35 blocks of 2 layers
    const poor = await gpuRunner(gemma('gemma2'), { kvCacheType: 'f16', kvBudgetBytes: 30_000 });
    expect([poor.kvGroups.length, poor.kv.arenas.length, poor.numBlocks]).toEqual([1, 1, Math.floor(30_000 / (3 * 512))]);
    expect(poor.kvNote).toMatch(/cannot hold the sliding-window group/);
    poor.dispose();
  });
});

describe.each([
  ['gemma2', 'f32'],
  ['gemma3', 'f32'],
  ['gemma2', 'q8_0'],
] as const)('%s, %s KV: out-of-window blocks freed vs every position kept, through the engine', (arch, kvCacheType) => {
  it('in cohorts with shared prefixes, and across preemption: every logit bit equal, every freed block poisoned', async () => {
    // 40 usable main blocks of 4 for four sessions of up to 74 positions: someone is preempted
    const freed = await serveGpu(arch, cohort, { windowKv: true, numBlocks: 41, kvCacheType });
    const kept = await serveGpu(arch, cohort, { windowKv: false, numBlocks: 41, kvCacheType });
    expectSameLogits(freed, kept);
    expect(freed.poisoned).toBeGreaterThan(100);
    expect(Math.max(...freed.events.map((e) => e.rows.length))).toBeGreaterThan(1);
    const { recomputes, hits } = recomputesAndHits(freed.events);
    expect(recomputes).toBeGreaterThan(0);
    expect(hits).toBeGreaterThan(0);
    // the sliding group held only windows: at most ceil(15 / 4) + 2 blocks a row between steps
    const decodes = freed.events.filter((e) => e.rows.every((r) => r.kind === 'decode'));
    expect(Math.max(...decodes.map((e) => e.kvGroups[1]!.used / e.rows.length))).toBeLessThanOrEqual(Math.ceil((SYNTH_SLIDING_WINDOW - 1) / BLOCK_SIZE) + 2);
    expect(kept.events[0]!.kvGroups.map((group) => group.window)).toEqual([null]); // one group: no sliding pool
  }, 600_000);
});

describe.each(['gemma2', 'gemma3'] as const)('%s: GpuRunner window pool vs CpuRunner window pool, through the engine', (arch) => {
  it('greedy tokens equal and logits close on sessions crossing the window', async () => {
    const prompts = [
      { tokens: prompt(45, 7), arriveAt: 0 },
      { tokens: prompt(9, 8), arriveAt: 2 },
      { tokens: [...prompt(45, 7).slice(0, 24), ...prompt(5, 9)], arriveAt: 5 },
    ];
    const kvCacheType = 'f16';
    const gpu = await serveGpu(arch, prompts, { windowKv: true, numBlocks: 64, kvCacheType });
    const cpuRunner = new CpuRunner(gemma(arch), { blockSize: BLOCK_SIZE, numBlocks: 64, maxTokensPerStep: MAX_TOKENS, maxRows: MAX_ROWS, maxDraftTokens: 0, kvCacheType, windowKv: true });
    expect(cpuRunner.kvGroups.map((group) => group.window)).toEqual([null, SYNTH_SLIDING_WINDOW]);
    const cpu = await serve(cpuRunner, prompts, false);
    expect(gpu.outputs).toEqual(cpu.outputs);
    expect(gpu.outputs.every((o) => o.length === 30)).toBe(true);
    expect([...gpu.logits.keys()].sort()).toEqual([...cpu.logits.keys()].sort());
    let worst = 0;
    for (const [key, expected] of cpu.logits) {
      const actual = gpu.logits.get(key)!;
      for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
    }
    expect(worst).toBeLessThanOrEqual(1e-3); // gpu-runner.test.ts's bound: f32 sums vs the oracle's
  }, 600_000);
});

describe.each(['gemma2', 'gemma3'] as const)('%s: verify rows over the window pool, through the engine', (arch) => {
  it('drafts accepted and rejected across the window and through preemption: plain greedy tokens, no freed block read', async () => {
    const o: RunnerOptions = { windowKv: true, numBlocks: 41, kvCacheType: 'f16' };
    const plain = await serveGpu(arch, cohort, o);
    // each prediction is the plain output with one token wrong: the drafts after it are rejected
    const predictions = plain.outputs.map((out, i) => out.map((t, k) => (k === 8 + 3 * i ? (t + 1) % VOCAB : t)));
    const runner = await gpuRunner(gemma(arch), { ...o, maxDraftTokens: 6 });
    const drafted = await serve(runner, cohort.map((p, i) => ({ ...p, prediction: predictions[i] })), true, { maxDraftTokens: 6 });
    expect(drafted.outputs).toEqual(plain.outputs);
    const rows = drafted.events.flatMap((e) => e.rows);
    const numDrafted = rows.reduce((n, r) => n + (r.numDrafted ?? 0), 0);
    const numAccepted = rows.reduce((n, r) => n + (r.numAccepted ?? 0), 0);
    expect(numAccepted).toBeGreaterThan(40);
    expect(numDrafted).toBeGreaterThan(numAccepted);
    expect(drafted.events.length).toBeLessThan(plain.events.length);
    expect(drafted.poisoned).toBeGreaterThan(50);
    expect(recomputesAndHits(drafted.events).recomputes).toBeGreaterThan(0);
  }, 600_000);
});
