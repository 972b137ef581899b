// EngineCore driving the CPU reference model: batched serving (sessions joining mid-run, shared
// prefixes, a tight KV pool) must give every session exactly the tokens serialized serving gives.
import { describe, expect, it } from 'vitest';
import { CpuRunner } from './cpu-runner';
import { syntheticModelDesc, TINY_SYNTH_DIMS } from '../model/testing/synthetic-model-fixtures';
import { EngineCore } from '../engine/engine-core';
import type { ChatMessage, ChatTemplate, Tokenizer } from '../engine/types';
import { promptTokens } from '../engine/testing/test-engine';

const VOCAB = 61;

/** Token id i is the character with code 48 + i; id 60 is EOS. */
const tokenizer: Tokenizer = {
  eosTokenIds: [60],
  encode: (text) => Array.from(text, (ch) => (ch.charCodeAt(0) - 48 + VOCAB) % VOCAB),
  decode: (ids) => Array.from(ids, (id) => (id === 60 ? '' : String.fromCharCode(48 + id))).join(''),
};
const template: ChatTemplate = { render: (messages: ChatMessage[]) => messages.map((m) => m.content).join('') };

const prompt = (length: number, salt: number): number[] => promptTokens(length, salt, 60, 0);

interface Turn {
  tokens: number[];
  temperature: number;
  /** Step at which the batched run sends it. */
  arriveAt: number;
}

interface Served {
  outputs: number[][];
  maxRowsPerStep: number;
  numPrefixHits: number;
  numRecomputes: number;
}

async function serve(turns: Turn[], mode: 'batched' | 'serialized', numBlocks: number, enablePrefixCaching: boolean): Promise<Served> {
  const model = syntheticModelDesc({ arch: 'llama', seed: 11, dims: { ...TINY_SYNTH_DIMS, vocab: VOCAB } });
  const runner = new CpuRunner(model, { blockSize: 4, numBlocks, maxTokensPerStep: 64, maxRows: 8 });
  const engine = new EngineCore({ runner, tokenizer, chatTemplate: template, mode, enablePrefixCaching, maxTokensPerStep: 48, manualSteps: true });
  const ids = turns.map((t, i) => engine.createSession({ maxNewTokens: 10, sampling: { temperature: t.temperature, topK: 20, topP: 0.9, seed: 100 + i } }));
  let numStepsRun = 0;
  let maxRowsPerStep = 0;
  let numPrefixHits = 0;
  let numRecomputes = 0;
  const computedEnd = new Map<string, number>();
  for (let step = 0; step < 10_000; step++) {
    turns.forEach((t, i) => {
      if ((mode === 'serialized' ? 0 : t.arriveAt) === step) engine.send(ids[i], t.tokens);
    });
    const event = await engine.step();
    if (event) {
      numStepsRun++;
      maxRowsPerStep = Math.max(maxRowsPerStep, event.rows.length);
      for (const row of event.rows) {
        const end = computedEnd.get(row.requestId);
        if (end === undefined && row.position > 0) numPrefixHits++;
        if (end !== undefined && row.position < end) numRecomputes++;
        computedEnd.set(row.requestId, row.position + row.numTokens);
      }
    }
    if (!event && turns.every((t) => t.arriveAt <= step)) break;
  }
  expect(numStepsRun).toBeGreaterThan(0);
  expect(engine.pool.stats().numUsed).toBe(0);
  const outputs = await Promise.all(ids.map(async (id) => (await engine.waitForTurn(id)).outputTokenIds));
  return { outputs, maxRowsPerStep, numPrefixHits, numRecomputes };
}

describe('EngineCore with the CPU reference model', () => {
  const shared = prompt(24, 9);
  const turns: Turn[] = [
    { tokens: prompt(30, 1), temperature: 0, arriveAt: 0 },
    { tokens: prompt(7, 2), temperature: 0.8, arriveAt: 0 },
    { tokens: [...shared, ...prompt(5, 3)], temperature: 0, arriveAt: 1 },
    { tokens: prompt(1, 4), temperature: 0, arriveAt: 3 },
    { tokens: [...shared, ...prompt(9, 5)], temperature: 0.8, arriveAt: 4 },
    { tokens: prompt(45, 6), temperature: 0, arriveAt: 6 },
  ];

  it('gives every session the same tokens batched as serialized', async () => {
    const serialized = await serve(turns, 'serialized', 200, false);
    const batched = await serve(turns, 'batched', 200, true);
    expect(serialized.maxRowsPerStep).toBe(1);
    expect(serialized.outputs.every((ids) => ids.length > 0)).toBe(true);
    expect(batched.maxRowsPerStep).toBeGreaterThanOrEqual(4);
    expect(batched.numPrefixHits).toBeGreaterThan(0);
    expect(batched.outputs).toEqual(serialized.outputs);
  });

  it('still does under a KV pool small enough to force preemption', async () => {
    const serialized = await serve(turns, 'serialized', 200, false);
    // 14 usable blocks = 56 positions: the longest turn just fits alone; together they need ~190
    const batched = await serve(turns, 'batched', 15, true);
    expect(batched.numRecomputes).toBeGreaterThan(0);
    expect(batched.outputs).toEqual(serialized.outputs);
  });
});
