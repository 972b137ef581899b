// Tests of prefix sharing and multi-turn reuse: shared system prompts take fewer blocks with the
// same tokens, later turns start from cached history, and unrelated sessions never share a block.
import { describe, expect, it } from 'vitest';
import type { EngineCore } from './engine-core';
import type { StepEvent } from './events';
import { FakeRunner } from './testing/fake-runner';
import { RunnerWrapper } from './testing/runner-wrapper';
import { runToIdle } from './testing/test-support';
import { makeEngine } from './testing/test-engine';
import type { StepPlan, StepResult } from './types';
const BLOCK_SIZE = 8;

/** Remembers every plan's rows so tests can look at block tables. */
class RecordingRunner extends RunnerWrapper {
  readonly plans: StepPlan[] = [];
  constructor() {
    super(new FakeRunner({ numBlocks: 300, blockSize: BLOCK_SIZE, eosEvery: 0 }));
  }
  override execute(plan: StepPlan): Promise<StepResult> {
    this.plans.push(plan);
    return this.inner.execute(plan);
  }
}

/** An engine on a RecordingRunner, with or without the prefix cache. */
function recordedEngine(enablePrefixCaching: boolean): { engine: EngineCore; runner: RecordingRunner } {
  const runner = new RecordingRunner();
  return { engine: makeEngine({ runner, enablePrefixCaching }), runner };
}

const SYSTEM = 'You are a careful assistant. '.repeat(12); // ~350 bytes, ~44 blocks

interface SharedRun {
  outputs: number[][];
  peakUsed: number;
  peakShared: number;
  events: StepEvent[];
  firstSessionId: string;
}

async function sharedSystemPromptRun(enablePrefixCaching: boolean): Promise<SharedRun> {
  const { engine } = recordedEngine(enablePrefixCaching);
  const questions = ['What is 2+2?', 'Name a colour.', 'Say hi.', 'Count to three.', 'Why?'];
  const ids = questions.map(() => engine.createSession({ systemPrompt: SYSTEM, maxNewTokens: 12 }));
  // the first session computes the system prompt; the others arrive once it is cached
  engine.send(ids[0], questions[0]);
  const events = [(await engine.step())!];
  ids.slice(1).forEach((id, i) => engine.send(id, questions[i + 1]));
  events.push(...(await runToIdle(engine)));
  const outputs = await Promise.all(ids.map(async (id) => (await engine.waitForTurn(id)).outputTokenIds));
  return {
    outputs,
    peakUsed: Math.max(...events.map((e) => e.kvBlocksUsed)),
    peakShared: Math.max(...events.map((e) => e.kvBlocksShared)),
    events,
    firstSessionId: ids[0],
  };
}

describe('prefix sharing', () => {
  it('sessions sharing a long system prompt use fewer blocks and produce the same tokens', async () => {
    const shared = await sharedSystemPromptRun(true);
    const unshared = await sharedSystemPromptRun(false);
    expect(shared.outputs).toEqual(unshared.outputs);
    expect(shared.outputs.every((o) => o.length === 12)).toBe(true);
    expect(shared.peakShared).toBeGreaterThanOrEqual(40);
    expect(unshared.peakShared).toBe(0);
    // four later sessions skip ~44 blocks each
    expect(unshared.peakUsed - shared.peakUsed).toBeGreaterThanOrEqual(4 * 40);
    // and skip computing them: their first rows start past the system prompt
    const laterFirstRows = shared.events[1].rows.filter((r) => r.sessionId !== shared.firstSessionId);
    expect(laterFirstRows).toHaveLength(4);
    for (const row of laterFirstRows) expect(row.position).toBeGreaterThanOrEqual(40 * BLOCK_SIZE);
  });

  it('a second turn reuses the session history instead of prefilling it again', async () => {
    const run = async (enablePrefixCaching: boolean) => {
      const { engine } = recordedEngine(enablePrefixCaching);
      const id = engine.createSession({ systemPrompt: SYSTEM, maxNewTokens: 30 });
      engine.send(id, 'First question, please answer at length.');
      await runToIdle(engine);
      const first = await engine.waitForTurn(id);
      engine.send(id, 'And a follow-up.');
      const events = await runToIdle(engine);
      const second = await engine.waitForTurn(id);
      return { engine, id, first, second, events };
    };
    const cached = await run(true);
    const uncached = await run(false);
    expect([cached.first.outputTokenIds, cached.second.outputTokenIds]).toEqual([
      uncached.first.outputTokenIds,
      uncached.second.outputTokenIds,
    ]);
    // the second prompt re-renders turn one (system, question, answer): all of it but the tail is cached
    const historyLength = cached.first.promptTokenIds.length + cached.first.outputTokenIds.length;
    const firstRow = cached.events[0].rows[0];
    expect(firstRow.position).toBeGreaterThanOrEqual(historyLength - 2 * BLOCK_SIZE);
    expect(cached.engine.sessions.get(cached.id).stats.cachedTokens).toBe(firstRow.position);
    expect(uncached.events[0].rows[0].position).toBe(0);
    const fed = (events: StepEvent[]) => events.reduce((n, e) => n + e.numTokens, 0);
    expect(fed(uncached.events) - fed(cached.events)).toBe(firstRow.position);
  });

  it('sessions share a block only where their token sequences are equal, and only full blocks below where they write', async () => {
    const { engine, runner } = recordedEngine(true);
    const a = engine.createSession({ systemPrompt: 'alpha '.repeat(20), maxNewTokens: 20 });
    const b = engine.createSession({ systemPrompt: 'bravo '.repeat(20), maxNewTokens: 20 });
    const c = engine.createSession({ systemPrompt: 'alpha '.repeat(20), maxNewTokens: 20 });
    engine.send(a, 'question one');
    await engine.step();
    engine.send(b, 'question two');
    engine.send(c, 'question three');
    await runToIdle(engine);
    const sequences = new Map<string, number[]>();
    for (const id of [a, b, c]) {
      const turn = await engine.waitForTurn(id);
      sequences.set(id, [...turn.promptTokenIds, ...turn.outputTokenIds]);
    }
    const maxShared = new Map<string, number>();
    for (const plan of runner.plans) {
      for (const x of plan.rows) {
        for (const y of plan.rows) {
          if (x.sessionId >= y.sessionId) continue;
          const common = intersect(x.blockTables[0]!, y.blockTables[0]!);
          const pair = `${x.sessionId}-${y.sessionId}`;
          maxShared.set(pair, Math.max(maxShared.get(pair) ?? 0, common.length));
          for (const blockId of common) {
            // a shared block sits at the same index in both tables, below where either row writes,
            // and both sequences hold the same tokens there
            const index = Array.from(x.blockTables[0]!).indexOf(blockId);
            expect(Array.from(y.blockTables[0]!).indexOf(blockId)).toBe(index);
            expect((index + 1) * BLOCK_SIZE).toBeLessThanOrEqual(Math.min(x.startPos, y.startPos));
            const span = (id: string) => sequences.get(id)!.slice(index * BLOCK_SIZE, (index + 1) * BLOCK_SIZE);
            expect(span(x.sessionId)).toEqual(span(y.sessionId));
          }
        }
      }
    }
    // a and c share their whole system prompt; b shares only the one block that reads '<|system'
    expect(maxShared.get(`${a}-${c}`)).toBeGreaterThan(10);
    expect(maxShared.get(`${a}-${b}`) ?? 0).toBeLessThanOrEqual(1);
    expect(maxShared.get(`${b}-${c}`) ?? 0).toBeLessThanOrEqual(1);
  });
});

function intersect(x: Int32Array, y: Int32Array): number[] {
  const ys = new Set(y);
  return Array.from(x).filter((id) => ys.has(id));
}
