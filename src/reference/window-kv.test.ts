// Sliding-window layers in a KV cache group of their own whose out-of-window blocks the engine gives back, against
// every position kept and masked: bitwise the same logits at every position, alone, in cohorts,
// across preemption and prefix hits, with every freed block poisoned while a step runs. CPU reference, gemma models.
import { describe, expect, it } from 'vitest';
import { CpuRunner } from './cpu-runner';
import { syntheticModelDesc, SYNTH_SLIDING_WINDOW, TINY_SYNTH_DIMS } from '../model/testing/synthetic-model-fixtures';
import { EngineCore } from '../engine/engine-core';
import type { StepEvent } from '../engine/events';
import type { ChatMessage, ChatTemplate, StepPlan, StepResult, Tokenizer } from '../engine/types';
import { RunnerWrapper } from '../engine/testing/runner-wrapper';
import { promptTokens } from '../engine/testing/test-engine';
import { logitsDifference, recomputesAndHits, servePrompts, type TimedPrompt } from '../engine/testing/serve-prompts';

const VOCAB = 61;
const tokenizer: Tokenizer = { eosTokenIds: [], encode: (text) => Array.from(text, (ch) => ch.charCodeAt(0) % VOCAB), decode: (ids) => Array.from(ids, (id) => String.fromCharCode(48 + id)).join('') };
const template: ChatTemplate = { render: (messages: ChatMessage[]) => messages.map((m) => m.content).join('') };
const prompt = (length: number, salt: number): number[] => promptTokens(length, salt, VOCAB, 0);

/**
 * Records each sampled position's logits. With `poison`, every sliding-group block nobody references is
 * NaN while a step runs: a block read after the engine gave it back turns logits NaN. Blocks the
 * prefix cache still holds get their K/V back after the step (a later hit may take them again).
 */
class RecordingRunner extends RunnerWrapper {
  readonly logits = new Map<string, Float32Array>();
  engine?: EngineCore;

  constructor(readonly cpu: CpuRunner, private readonly poison: boolean) {
    super(cpu);
  }

  override execute(plan: StepPlan): Promise<StepResult> {
    const restore = this.poison ? this.poisonFreeWindowBlocks() : () => {};
    const detail = this.cpu.executeDetailed(plan);
    restore();
    const vocab = this.cpu.weights.config.vocabSize;
    detail.sampleRows.forEach((r, i) => {
      const row = plan.rows[r]!;
      this.logits.set(`${row.sessionId}@${row.startPos + row.tokenIds.length}`, detail.logits.slice(i * vocab, (i + 1) * vocab));
    });
    return Promise.resolve({ sampledIds: detail.sampledIds });
  }

  /** NaN in every unreferenced block of the sliding-window group's every layer; returns what puts the cached ones back. */
  private poisonFreeWindowBlocks(): () => void {
    const g = this.engine!.kv.groups.findIndex((group) => group.window !== null);
    const pool = this.engine!.kv.groups[g]!.pool;
    const kv = this.cpu.kv;
    const floats = kv.floatsPerBlock;
    const saved: Array<{ array: Float32Array; at: number; values: Float32Array }> = [];
    for (let id = 1; id < kv.groups[g]!.numBlocks; id++) {
      if (pool.refCount(id) > 0) continue;
      kv.layerGroup.forEach((group, l) => {
        if (group !== g) return;
        for (const array of [kv.k[l]!, kv.v[l]!]) {
          if (pool.isCached(id)) saved.push({ array, at: id * floats, values: array.slice(id * floats, (id + 1) * floats) });
          array.fill(NaN, id * floats, (id + 1) * floats);
        }
      });
    }
    return () => saved.forEach(({ array, at, values }) => array.set(values, at));
  }
}

interface Run {
  logits: Map<string, Float32Array>;
  outputs: number[][];
  events: StepEvent[];
}

/** Serves `prompts` (arriving at the given steps) on arch's synthetic model, the window pool on or off. */
async function serve(arch: 'gemma2' | 'gemma3', prompts: TimedPrompt[], windowKv: boolean, numBlocks: number, maxRows: number): Promise<Run> {
  const model = syntheticModelDesc({ arch, seed: 9, tieWordEmbeddings: true, dims: { ...TINY_SYNTH_DIMS, vocab: VOCAB } });
  const cpu = new CpuRunner(model, { blockSize: 4, numBlocks, maxTokensPerStep: 40, maxRows, maxDraftTokens: 0, kvCacheType: 'f32', windowKv });
  const runner = new RecordingRunner(cpu, windowKv);
  const served = await servePrompts(runner, prompts, { tokenizer, chatTemplate: template, maxTokensPerStep: 24, maxRows, maxNewTokens: 30, onEngine: (engine) => (runner.engine = engine) });
  return { logits: runner.logits, ...served };
}

function expectSameLogits(freed: Run, kept: Run): void {
  expect(logitsDifference(freed.logits, kept.logits)).toBeNull();
  expect(freed.outputs).toEqual(kept.outputs);
}

describe.each(['gemma2', 'gemma3'] as const)('%s: out-of-window blocks freed vs every position kept', (arch) => {
  it('alone: every logit bit equal, while the window pool holds only the window', async () => {
    const prompts = [{ tokens: prompt(45, 1), arriveAt: 0 }];
    const freed = await serve(arch, prompts, true, 64, 4);
    const kept = await serve(arch, prompts, false, 64, 4);
    expectSameLogits(freed, kept);
    // 75 positions in blocks of 4, a window of 16: at most 5 window blocks held past the prompt
    const decodes = freed.events.filter((e) => e.rows.some((r) => r.kind === 'decode'));
    expect(Math.max(...decodes.map((e) => e.kvGroups[1]!.used))).toBeLessThanOrEqual(Math.ceil((SYNTH_SLIDING_WINDOW - 1) / 4) + 2);
    expect(Math.max(...freed.events.map((e) => e.kvBlocksUsed))).toBe(Math.ceil(75 / 4));
    expect(kept.events[0]!.kvGroups.map((group) => group.window)).toEqual([null]); // one group: no sliding pool
  }, 120_000);

  it('in cohorts with shared prefixes, and across preemption: every logit bit equal', async () => {
    const shared = prompt(30, 3);
    const prompts = [
      { tokens: prompt(38, 2), arriveAt: 0 },
      { tokens: [...shared, ...prompt(9, 4)], arriveAt: 0 },
      { tokens: [...shared, ...prompt(14, 5)], arriveAt: 6 },
      { tokens: prompt(20, 6), arriveAt: 3 },
    ];
    // 40 usable blocks of 4 for four sessions of up to 74 positions: someone is preempted
    const freed = await serve(arch, prompts, true, 41, 4);
    const kept = await serve(arch, prompts, false, 41, 4);
    expectSameLogits(freed, kept);
    const rowsPerStep = Math.max(...freed.events.map((e) => e.rows.length));
    expect(rowsPerStep).toBeGreaterThan(1);
    // recomputes (a row starting before what its request computed) and prefix hits both happened
    const { recomputes, hits } = recomputesAndHits(freed.events);
    expect(recomputes).toBeGreaterThan(0);
    expect(hits).toBeGreaterThan(0);
  }, 240_000);
});
