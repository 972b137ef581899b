// The capacity benchmark's measurement: the KV pool sized as GpuRunner sizes it (kv-arena.ts's
// planKvArena for a budget and storage type), then N sessions of one length added to the engine's
// real Scheduler / KVCacheManager / BlockPool and stepped on a FakeRunner until every one ends,
// counting how many held their whole context in the pool at once. No GPU, no weights.
import { BlockPool } from '../src/engine/block-pool';
import { KVCacheManager } from '../src/engine/kv-manager';
import type { Request } from '../src/engine/request';
import { Scheduler } from '../src/engine/scheduler';
import { FakeRunner } from '../src/engine/testing/fake-runner';
import { ByteTokenizer } from '../src/engine/testing/test-support';
import { planKvArena, type KvArenaLimits } from '../src/gpu/kv-arena';
import { kvRowBytes, type KvCacheType } from '../src/model/kv-types';
import { mulberry32 } from '../src/engine/seeded-random';

/** The attention shape that sets a model's KV bytes: nothing else of it matters to the pool. */
export interface KvModelShape {
  name: string;
  numLayers: number;
  numKvHeads: number;
  headDim: number;
  maxPositions: number;
  /** Where the figures come from (the model's config.json). */
  source: string;
}

/** The published configs' figures (num_hidden_layers, num_key_value_heads, head_dim or hidden_size / num_attention_heads). */
export const PUBLISHED_KV_SHAPES: KvModelShape[] = [
  { name: 'SmolLM2-360M', numLayers: 32, numKvHeads: 5, headDim: 64, maxPositions: 8192, source: 'HuggingFaceTB/SmolLM2-360M config.json: 32 layers, 15 heads of 64 (hidden 960), 5 KV heads' },
  { name: 'Qwen2.5-0.5B', numLayers: 24, numKvHeads: 2, headDim: 64, maxPositions: 32768, source: 'Qwen/Qwen2.5-0.5B config.json: 24 layers, 14 heads of 64 (hidden 896), 2 KV heads' },
  { name: 'Llama-3.2-1B', numLayers: 16, numKvHeads: 8, headDim: 64, maxPositions: 131072, source: 'meta-llama/Llama-3.2-1B config.json: 16 layers, 32 heads, head_dim 64, 8 KV heads' },
];

/** The pool's block count for a budget and type, as GpuRunner.create plans it (block 0 included). */
export function poolBlocks(shape: KvModelShape, type: KvCacheType, budgetBytes: number, limits: KvArenaLimits, blockSize: number): number {
  const kvDim = shape.numKvHeads * shape.headDim;
  // built apart so the same line compiles whether or not KvShape has its storage type yet
  const kvShape = { numLayers: shape.numLayers, blockSize, kvDim, type };
  const plan = planKvArena(kvShape, limits, budgetBytes);
  const expectedLayerBytes = plan.numBlocks * 2 * blockSize * kvRowBytes(type, kvDim);
  if (plan.layerBytes !== expectedLayerBytes) {
    throw new Error(`planKvArena laid out ${plan.layerBytes} bytes a layer for ${plan.numBlocks} ${type} blocks, not ${expectedLayerBytes}: this kv-arena.ts does not size blocks by their storage type`);
  }
  return plan.numBlocks;
}

export interface AdmissionResult {
  /** Sessions added (more than can fit, so the pool is the bound). */
  requests: number;
  /** Most sessions whose whole prompt was in the pool after one step: the measured capacity. */
  peakHeld: number;
  /** Sessions that ended with 'length' (all of their tokens generated): every one must. */
  completed: number;
  preemptions: number;
  steps: number;
}

export interface AdmissionOptions {
  /** Tokens generated per session after its prompt (default 8, under one block, so the prompt's blocks also hold them). */
  newTokens?: number;
  /**
   * Token budget of a step (default: every prompt at once, so the pool is the only bound; with the
   * engine's 512 the same sessions are admitted over more steps, but the first ones end before the
   * last arrive, and the peak would measure step rate, not memory).
   */
  maxTokensPerStep?: number;
  seed?: number;
}

/**
 * Adds `requests` sessions of `tokens` positions each (a prompt of tokens - newTokens distinct token
 * ids, so no prefix is shared, then newTokens generated) to a scheduler over a pool of `numBlocks`
 * blocks, with a row cap past `requests` so only the pool limits them, and steps until every one
 * ends. The peak of sessions holding their whole prompt at once is what the pool admitted.
 */
export function admitSessions(numBlocks: number, blockSize: number, tokens: number, requests: number, options: AdmissionOptions = {}): AdmissionResult {
  const newTokens = options.newTokens ?? 8;
  const maxTokensPerStep = options.maxTokensPerStep ?? tokens * requests;
  const promptTokens = tokens - newTokens;
  const kv = new KVCacheManager(new BlockPool(numBlocks, blockSize));
  const scheduler = new Scheduler(kv, new ByteTokenizer(), { maxTokensPerStep, maxRows: requests + 1 });
  const runner = new FakeRunner({ blockSize, numBlocks, maxTokensPerStep, maxRows: requests + 1 });
  const random = mulberry32(options.seed ?? 1);
  const all: Request[] = [];
  for (let i = 0; i < requests; i++) {
    // the first token differs between sessions (i spelled in base 256 over two tokens), the rest random
    const prompt = Array.from({ length: promptTokens }, (_, p) => (p === 0 ? i % 256 : p === 1 ? Math.floor(i / 256) % 256 : Math.floor(random() * 256)));
    all.push(scheduler.addRequest({ requestId: `r${i}`, sessionId: `s${i}`, promptTokenIds: prompt, sampling: { temperature: 0, topK: 0, topP: 1, seed: i }, maxTokens: newTokens, ignoreEos: true }));
  }
  let peakHeld = 0;
  let steps = 0;
  while (scheduler.hasWork()) {
    const plan = scheduler.schedule();
    scheduler.update(plan, runner.executeSync(plan));
    steps++;
    let held = 0;
    for (const r of all) if (r.status === 'running' && r.numComputedTokens >= promptTokens) held++;
    peakHeld = Math.max(peakHeld, held);
    if (steps > 1_000_000) throw new Error('admission run did not end');
  }
  return {
    requests,
    peakHeld,
    completed: all.filter((r) => r.finishReason === 'length').length,
    preemptions: all.reduce((n, r) => n + r.numPreemptions, 0),
    steps,
  };
}
