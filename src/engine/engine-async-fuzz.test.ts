// Seeded schedules through the self-running loop over a runner that resolves after random
// microtasks, macrotasks and timers, with API calls injected at every await point (FakeRunner,
// speculating, and every third runner made, a replacement included, one that refuses drafts).
import { describe, expect, it } from 'vitest';
import { watchUnhandledRejections } from './testing/unhandled.node';
import { runAsyncSchedule, type AsyncFuzzSetup } from './testing/async-fuzz.node';
import { FakeRunner } from './testing/fake-runner';
import { ByteTokenizer, PlainChatTemplate } from './testing/test-support';

const NUM_SCHEDULES = Number(process.env.ASYNC_FUZZ_N ?? 2000);

let numRunnersMade = 0;
const setup: AsyncFuzzSetup = {
  makeRunner: () => new FakeRunner({ blockSize: 4, numBlocks: 48, eosEvery: 23, vocabSize: 12, copyRate: 0.5, maxDraftTokens: numRunnersMade++ % 3 === 2 ? 0 : 4 }),
  tokenizer: new ByteTokenizer(),
  chatTemplate: new PlainChatTemplate(),
  minTokenId: 97,
  maxTokenId: 110,
  maxSessions: 6,
  maxPromptTokens: 60,
  maxNewTokens: 12,
  maxReplacements: 2,
};

describe('engine loop under async schedules', () => {
  it(`no overlap, no unhandled rejection, every turn ends once with its solo tokens, the pool drains (${NUM_SCHEDULES} schedules)`, async () => {
    const unhandled = watchUnhandledRejections();
    const totals = { numTurns: 0, numCancelled: 0, numReplacements: 0, numInjected: 0, numAccepted: 0, numRejected: 0 };
    for (let seed = Number(process.env.ASYNC_FUZZ_FIRST ?? 1); seed <= NUM_SCHEDULES; seed++) {
      try {
        const stats = await runAsyncSchedule(setup, seed);
        for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += stats[key];
      } catch (err) {
        throw new Error(`seed ${seed}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      expect(unhandled).toEqual([]);
    }
    // the schedules must really exercise turns, cancels/resets/closes and runner swaps mid-flight
    expect(totals.numTurns).toBeGreaterThan(NUM_SCHEDULES * 2);
    expect(totals.numCancelled).toBeGreaterThan(NUM_SCHEDULES / 10);
    expect(totals.numReplacements).toBeGreaterThan(NUM_SCHEDULES / 4);
    // with drafts verified mid-schedule, accepted and rolled back
    expect(totals.numAccepted).toBeGreaterThan(NUM_SCHEDULES / 3);
    expect(totals.numRejected).toBeGreaterThan(NUM_SCHEDULES / 2);
  }, 900_000);
});
