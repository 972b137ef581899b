// Seeded schedules through the self-running loop over a runner that resolves after random
// microtasks and macrotasks, with API calls injected at every await point (FakeRunner, speculating
// or, drawn from the seed, refusing drafts). A failing seed prints the command that replays it alone.
import { describe, expect, it } from 'vitest';
import { watchUnhandledRejections } from './testing/unhandled.node';
import { runAsyncSchedule, type AsyncFuzzSetup } from './testing/async-fuzz.node';
import { FakeRunner } from './testing/fake-runner';
import { ByteTokenizer, PlainChatTemplate } from './testing/test-support';

/** ASYNC_FUZZ_SEED=n runs schedule n alone (what a failure prints); else seeds ASYNC_FUZZ_FIRST (1)..ASYNC_FUZZ_N (2000). */
const ONLY_SEED = process.env.ASYNC_FUZZ_SEED === undefined ? null : Number(process.env.ASYNC_FUZZ_SEED);
const NUM_SCHEDULES = ONLY_SEED ?? Number(process.env.ASYNC_FUZZ_N ?? 2000);
const FIRST_SEED = ONLY_SEED ?? Number(process.env.ASYNC_FUZZ_FIRST ?? 1);

const setup: AsyncFuzzSetup = {
  makeRunner: (speculates) => new FakeRunner({ blockSize: 4, numBlocks: 48, eosEvery: 23, vocabSize: 12, copyRate: 0.5, maxDraftTokens: speculates ? 4 : 0 }),
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
    for (let seed = FIRST_SEED; seed <= NUM_SCHEDULES; seed++) {
      try {
        const stats = await runAsyncSchedule(setup, seed);
        for (const key of Object.keys(totals) as Array<keyof typeof totals>) totals[key] += stats[key];
      } catch (err) {
        const replay = `ASYNC_FUZZ_SEED=${seed} npx vitest run --project unit src/engine/engine-async-fuzz.test.ts`;
        console.error(`async fuzz: seed ${seed} failed; replay it alone with\n  ${replay}`);
        throw new Error(`seed ${seed} (replay: ${replay}): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      expect(unhandled).toEqual([]);
    }
    if (ONLY_SEED !== null) return; // one replayed schedule: the totals below are about the whole run
    // the schedules must really exercise turns, cancels/resets/closes and runner swaps mid-flight
    expect(totals.numTurns).toBeGreaterThan(NUM_SCHEDULES * 2);
    expect(totals.numCancelled).toBeGreaterThan(NUM_SCHEDULES / 10);
    expect(totals.numReplacements).toBeGreaterThan(NUM_SCHEDULES / 4);
    // with drafts verified mid-schedule, accepted and rolled back
    expect(totals.numAccepted).toBeGreaterThan(NUM_SCHEDULES / 3);
    expect(totals.numRejected).toBeGreaterThan(NUM_SCHEDULES / 2);
  }, 900_000);

  it('a schedule is a function of its seed alone: replayed after another, it runs the same', async () => {
    const first = await runAsyncSchedule(setup, 17);
    await runAsyncSchedule(setup, 18);
    expect(await runAsyncSchedule(setup, 17)).toEqual(first);
  });
});
