// Speculative decoding through the whole engine on the FakeRunner: output token-identical to plain
// decode (greedy and sampled, alone and in cohorts), finish rules inside accepted runs, KV rollback.
import { describe, expect, it } from 'vitest';
import type { EngineCore, EngineCoreOptions } from './engine-core';
import type { StepEvent } from './events';
import type { SessionOptions } from './session-options';
import type { TurnResult } from './sessions';
import { FakeRunner, type FakeRunnerOptions } from './testing/fake-runner';
import { makeRandom } from './testing/test-support';
import { ClockedRunner, makeEngine } from './testing/test-engine';
import type { ModelRunner } from './types';

/** A small vocabulary and a copying "model": prompt lookup often guesses right, often not. */
const RUNNER: FakeRunnerOptions = { blockSize: 4, numBlocks: 200, vocabSize: 6, copyRate: 0.7, maxDraftTokens: 6 };

interface Turn {
  prompt: number[];
  options: SessionOptions;
  /** Step at which it is sent (default 0). */
  arriveAt?: number;
}

interface Served {
  results: TurnResult[];
  events: StepEvent[];
  engine: EngineCore;
}

async function serve(turns: Turn[], runner: ModelRunner = new FakeRunner(RUNNER), engineOptions: Partial<EngineCoreOptions> = {}, onStep?: (engine: EngineCore) => void): Promise<Served> {
  const engine = makeEngine({ runner, maxTokensPerStep: 64, ...engineOptions });
  const ids = turns.map((t) => engine.createSession(t.options));
  const events: StepEvent[] = [];
  for (let step = 0; step < 10_000; step++) {
    turns.forEach((t, i) => {
      if ((t.arriveAt ?? 0) === step) engine.send(ids[i], t.prompt);
    });
    const event = await engine.step();
    if (event) {
      events.push(event);
      onStep?.(engine);
    } else if (turns.every((t) => (t.arriveAt ?? 0) < step)) break;
  }
  const results = await Promise.all(ids.map((id) => engine.waitForTurn(id)));
  expect(engine.pool.stats().numUsed).toBe(0);
  return { results, events, engine };
}

const withSpeculation = (turns: Turn[], speculation: SessionOptions['speculation']): Turn[] => turns.map((t) => ({ ...t, options: { ...t.options, speculation } }));
const drafted = (events: StepEvent[]): number => events.reduce((n, e) => n + e.rows.reduce((m, r) => m + (r.numDrafted ?? 0), 0), 0);
const accepted = (events: StepEvent[]): number => events.reduce((n, e) => n + e.rows.reduce((m, r) => m + (r.numAccepted ?? 0), 0), 0);
const outputs = (s: Served): Array<[number[], string, string]> => s.results.map((r) => [r.outputTokenIds, r.text, r.finishReason]);

function randomTurns(seed: number, sampled: boolean): Turn[] {
  const rnd = makeRandom(seed);
  return Array.from({ length: rnd.int(1, 6) }, (_, i) => ({
    prompt: Array.from({ length: rnd.int(1, 30) }, () => rnd.int(97, 102)),
    options: {
      maxNewTokens: rnd.int(1, 60),
      sampling: sampled ? { temperature: rnd.pick([0.5, 1, 2]), topK: rnd.pick([0, 3]), topP: rnd.pick([1, 0.8]) } : { temperature: 0 },
      seed: 1000 * seed + i,
      stopStrings: rnd.next() < 0.3 ? ['cab'] : [],
    },
    arriveAt: rnd.int(0, 12),
  }));
}

describe('speculative decoding on the FakeRunner', () => {
  it.each([false, true])('gives the tokens of plain decode, alone and in cohorts (sampled: %s)', async (sampled) => {
    let numDrafted = 0;
    let numAccepted = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const turns = randomTurns(seed, sampled);
      const plain = await serve(withSpeculation(turns, 'off'));
      expect(drafted(plain.events)).toBe(0);
      const solo = await Promise.all(turns.map((t) => serve(withSpeculation([{ ...t, arriveAt: 0 }], { maxDraftTokens: 5 }))));
      const spec = await serve(withSpeculation(turns, { maxDraftTokens: 5 }));
      expect(outputs(spec)).toEqual(outputs(plain));
      expect(solo.flatMap(outputs)).toEqual(outputs(plain));
      numDrafted += drafted(spec.events);
      numAccepted += accepted(spec.events);
      // fewer steps: accepted drafts are tokens a step did not have to decode
      if (accepted(spec.events) > 0) expect(spec.events.length).toBeLessThan(plain.events.length);
    }
    expect(numAccepted).toBeGreaterThan(100);
    expect(numDrafted - numAccepted).toBeGreaterThan(100); // rejections, and their rollback, happened too
  });

  it('never sends drafts to a runner that declares no maxDraftTokens', async () => {
    const runner = new FakeRunner({ ...RUNNER, maxDraftTokens: 0 }); // throws on any row with drafts
    const turns = withSpeculation(randomTurns(3, false), { maxDraftTokens: 5 });
    const { events } = await serve(turns, runner, { speculation: 'auto' });
    expect(drafted(events)).toBe(0);
    expect(events.every((e) => e.rows.every((r) => r.numDrafted === undefined))).toBe(true);
  });

  it('ends on EOS, a stop string, maxNewTokens and the context exactly as plain decode, inside an accepted run', async () => {
    // the prediction is the plain output itself, so every draft is accepted and each limit lands mid-run
    const cases: Array<{ runner: FakeRunnerOptions; options: SessionOptions; reason: string }> = [
      { runner: { ...RUNNER, eosEvery: 9, copyRate: 0 }, options: { maxNewTokens: 200 }, reason: 'eos' },
      { runner: { ...RUNNER, copyRate: 0 }, options: { maxNewTokens: 7 }, reason: 'length' },
      { runner: { ...RUNNER, copyRate: 0, maxContext: 23 }, options: {}, reason: 'length' },
      { runner: { ...RUNNER, copyRate: 0 }, options: { maxNewTokens: 200, stopStrings: ['ca'] }, reason: 'stop' },
    ];
    for (const c of cases) {
      for (let salt = 0; salt < 6; salt++) {
        const prompt = [97 + salt, 98, 99, 100 + (salt % 3)];
        const plain = await serve([{ prompt, options: { ...c.options, speculation: 'off' } }], new FakeRunner(c.runner));
        expect(plain.results[0].finishReason).toBe(c.reason);
        const prediction = [...plain.results[0].outputTokenIds, 97, 98, 99];
        const spec = await serve([{ prompt, options: { ...c.options, speculation: { maxDraftTokens: 6 }, predictionTokenIds: prediction } }], new FakeRunner(c.runner));
        expect(outputs(spec)).toEqual(outputs(plain));
        expect(spec.results[0].outputTokenIds.length === 1 || accepted(spec.events) > 0).toBe(true);
        // a run is cut only where the turn ends: every earlier verify row kept all its drafts
        const verifyRows = spec.events.flatMap((e) => e.rows.filter((r) => r.numDrafted));
        verifyRows.slice(0, -1).forEach((r) => expect(r.numAccepted).toBe(r.numDrafted));
        // every token a row added reached the session's stats
        expect(spec.engine.sessions.get('s1').stats.tokensOut).toBe(plain.results[0].outputTokenIds.length);
      }
    }
  });

  it('gives back the blocks only rejected drafts used, and never caches them', async () => {
    const turns = withSpeculation(randomTurns(11, false).map((t) => ({ ...t, options: { ...t.options, maxNewTokens: 80 } })), { maxDraftTokens: 6 });
    let numChecked = 0;
    const { events } = await serve(turns, new FakeRunner(RUNNER), {}, (engine) => {
      for (const session of engine.sessions.list()) {
        const request = engine.scheduler.getRequest(`${session.sessionId}:1`);
        if (!request || request.status !== 'running') continue;
        const table = engine.kv.blockTable(request.requestId);
        // a running request holds no block past its known tokens (plain decode may hold one fewer)
        expect(table.length).toBeLessThanOrEqual(Math.ceil(request.numTokens / engine.kv.blockSize));
        expect(table.length).toBeGreaterThanOrEqual(Math.ceil(request.numComputedTokens / engine.kv.blockSize));
        const numFull = Math.floor(request.numComputedTokens / engine.kv.blockSize);
        table.forEach((id, b) => {
          if (b >= numFull) expect(engine.pool.isCached(id)).toBe(false);
        });
        numChecked++;
      }
    });
    expect(numChecked).toBeGreaterThan(50);
    expect(drafted(events) - accepted(events)).toBeGreaterThan(10);
  });

  it('cancels and closes a session whose verify row is in flight; the others keep their tokens', async () => {
    const turns: Turn[] = [0, 1, 2].map((i) => ({ prompt: [97, 98, 99, 97, 98, 99 + i], options: { maxNewTokens: 40, speculation: { maxDraftTokens: 6 } } }));
    const plain = await serve(withSpeculation(turns, 'off'));
    const engine = makeEngine({ fake: RUNNER });
    const ids = turns.map((t) => engine.createSession(t.options));
    ids.forEach((id, i) => engine.send(id, turns[i].prompt));
    let cancelled = false;
    for (let step = 0; step < 1000; step++) {
      const pending = engine.step();
      if (!cancelled && engine.scheduler.getRequest(`${ids[0]}:1`)?.numOutputTokens) {
        // the step in flight carries s1's and s2's rows (drafts or not): cancel one, close the other
        engine.cancel(ids[0]);
        engine.closeSession(ids[1]);
        cancelled = true;
      }
      if (!(await pending)) break;
    }
    const first = await engine.waitForTurn(ids[0]);
    expect(first.finishReason).toBe('cancelled');
    expect((await engine.waitForTurn(ids[2])).outputTokenIds).toEqual(plain.results[2].outputTokenIds);
    expect(engine.pool.stats().numUsed).toBe(0);
  });

  it('proposes from predictionTokenIds: a right prediction is accepted whole', async () => {
    const prompt = [120, 121, 122];
    const plain = await serve([{ prompt, options: { maxNewTokens: 30, speculation: 'off' } }], new FakeRunner({ ...RUNNER, copyRate: 0 }));
    const spec = await serve(
      [{ prompt, options: { maxNewTokens: 30, speculation: { maxDraftTokens: 6 }, predictionTokenIds: plain.results[0].outputTokenIds } }],
      new FakeRunner({ ...RUNNER, copyRate: 0 }),
    );
    expect(spec.results[0].outputTokenIds).toEqual(plain.results[0].outputTokenIds);
    // prefill, then 29 tokens in runs of at most 7: 5 verify steps
    expect(spec.events.length).toBe(1 + Math.ceil(29 / 7));
    expect(accepted(spec.events)).toBe(drafted(spec.events));
  });
});

describe("speculation 'auto'", () => {
  /** Drafted tokens per decode row over the steps after the cost model calibrated. */
  async function draftsPerRow(numSessions: number, fixedMs: number, perTokenMs: number): Promise<number> {
    // each step takes fixedMs + perTokenMs per fed token
    const runner = new ClockedRunner({ fixedMs, perTokenMs }, new FakeRunner(RUNNER));
    // a repeating prompt: prompt lookup proposes, and the copying model mostly agrees
    const turns: Turn[] = Array.from({ length: numSessions }, (_, i) => ({
      prompt: Array.from({ length: 40 }, (_, j) => 97 + ((j + i) % 5)),
      options: { maxNewTokens: 60, speculation: 'auto' },
      arriveAt: i % 4, // chunks in several steps, so the fit sees per-token cost apart from per-row
    }));
    const { events } = await serve(turns, runner, { maxRows: 64, maxTokensPerStep: 4096 });
    let rows = 0;
    let numDrafted = 0;
    for (const e of events.slice(12)) {
      for (const r of e.rows) {
        if (r.kind !== 'decode') continue;
        rows++;
        numDrafted += r.numDrafted ?? 0;
      }
    }
    return numDrafted / rows;
  }

  it('drafts where a step costs about the same for more tokens, and not where every token costs its own', async () => {
    const memoryBound = await draftsPerRow(1, 10, 0.05);
    const computeBound = await draftsPerRow(1, 0.01, 1);
    expect(memoryBound).toBeGreaterThan(1);
    expect(computeBound).toBe(0);
  });

  it('drafts less per row as the cohort grows', async () => {
    const small = await draftsPerRow(2, 10, 0.3);
    const large = await draftsPerRow(48, 10, 0.3);
    expect(small).toBeGreaterThan(1);
    expect(large).toBeLessThan(small / 2);
  });
});
