// The page's Compare card and the benchmark's report compute the batched/serialized speed-up by
// one definition: the same engine runs, fed to both, give the same figure. Not a speed test.
import { describe, expect, it } from 'vitest';
import { compareOutcome } from '../src/app/derive/compare';
import { EngineCore } from '../src/engine/engine-core';
import type { EngineMode, StepEvent } from '../src/engine/events';
import { FakeRunner } from '../src/engine/testing/fake-runner';
import { ByteTokenizer, PlainChatTemplate } from '../src/engine/testing/test-support';
import { decodeThroughput, speedup } from '../src/protocol/metrics';
import { toStepRecord, type RunRecord } from '../testing/harness/driver';
import { throughputPoint } from './grid';
import { summarize } from './workload';

const PROMPTS = ['Count from one to ten.', 'Name three colours.', 'Describe a tree.', 'List four animals.'];

/** A deterministic clock: each step costs 10 ms plus 1 ms per row, as a fixed-cost runner would. */
async function runMode(mode: EngineMode): Promise<{ events: StepEvent[]; record: RunRecord }> {
  let clockMs = 0;
  const inner = new FakeRunner({ numBlocks: 200, blockSize: 4 });
  const runner = Object.assign(Object.create(inner) as FakeRunner, {
    execute: async (plan: Parameters<FakeRunner['execute']>[0]) => {
      clockMs += 10 + plan.rows.length;
      return inner.execute(plan);
    },
  });
  const engine = new EngineCore({ runner, tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate(), mode, now: () => clockMs });
  const events: StepEvent[] = [];
  engine.subscribe((event) => events.push(event));
  const ids = PROMPTS.map(() => engine.createSession({ maxNewTokens: 12, ignoreEos: true }));
  ids.forEach((id, i) => engine.send(id, PROMPTS[i]!));
  const results = await Promise.all(ids.map((id) => engine.waitForTurn(id)));
  engine.dispose();
  const steps = events.map((event) => toStepRecord(event, event.startedAtMs + event.elapsedMs));
  const turns = results.map((result) => ({ sessionId: result.sessionId, sentAtMs: 0, sentAfterSteps: 0, result }));
  return { events, record: { mode, turns, steps, wallMs: clockMs } };
}

describe('speed-up', () => {
  it('is one figure for the page and the benchmark report on the same runs', async () => {
    const serialized = await runMode('serialized');
    const batched = await runMode('batched');
    const idsOf = (record: RunRecord) => new Set(record.turns.map((t) => t.sessionId));

    const page = compareOutcome({ steps: serialized.events, sessionIds: idsOf(serialized.record) }, { steps: batched.events, sessionIds: idsOf(batched.record) });
    const report = throughputPoint('chat', PROMPTS.length, { serialized: [summarize(serialized.record, 0)], batched: [summarize(batched.record, 0)] }, true);

    expect(page.ratio).not.toBeNull();
    expect(report.speedup).toBe(page.ratio);
    expect(report.batched.medianTokensPerSec).toBe(page.batched.tokensPerSec);
    expect(report.serialized.medianTokensPerSec).toBe(page.serialized.tokensPerSec);
    expect(page.ratio).toBe(speedup(decodeThroughput(batched.events), decodeThroughput(serialized.events)));
    // 4 rows share each batched decode step (14 ms) where serialized pays 11 ms per row.
    expect(page.ratio!).toBeCloseTo((4 * 1000) / 14 / (1000 / 11), 5);
  });
});
