// Tests of a prediction's use (accepted = prediction tokens the output contains in order) and of a
// text prediction through the engine: encoded once, drafted from, its counts in the session's stats.
import { describe, expect, it } from 'vitest';
import { MAX_MATCH_CELLS, matchedPredictionTokens, predictionUse } from './prediction';
import { makeRandom, runToIdle } from './testing/test-support';
import { makeEngine } from './testing/test-engine';

/** The textbook O(n*m) table, for the fast path to agree with. */
function lcs(a: readonly number[], b: readonly number[]): number {
  const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) t[i][j] = a[i - 1] === b[j - 1] ? t[i - 1][j - 1] + 1 : Math.max(t[i - 1][j], t[i][j - 1]);
  return t[a.length][b.length];
}

describe('matchedPredictionTokens', () => {
  it('counts the prediction tokens the output contains in order', () => {
    expect(matchedPredictionTokens([1, 2, 3, 4], [1, 2, 3, 4])).toBe(4);
    expect(matchedPredictionTokens([1, 2, 3, 4], [1, 2, 9, 9, 3, 4])).toBe(4); // output inserted text
    expect(matchedPredictionTokens([1, 2, 3, 4], [1, 4])).toBe(2); // output left some out
    expect(matchedPredictionTokens([1, 2, 3], [3, 2, 1])).toBe(1); // order matters
    expect(matchedPredictionTokens([5, 5], [5])).toBe(1); // each output token used once
    expect(matchedPredictionTokens([], [1, 2])).toBe(0);
    expect(matchedPredictionTokens([1, 2], [])).toBe(0);
  });

  it('agrees with the plain table on random pairs', () => {
    const rnd = makeRandom(7);
    for (let k = 0; k < 300; k++) {
      const p = Array.from({ length: rnd.int(0, 20) }, () => rnd.int(0, 4));
      const o = Array.from({ length: rnd.int(0, 20) }, () => rnd.int(0, 4));
      expect(matchedPredictionTokens(p, o), `${p} / ${o}`).toBe(lcs(p, o));
    }
  });

  it('past MAX_MATCH_CELLS counts the common prefix and suffix only (a lower bound)', () => {
    const n = Math.ceil(Math.sqrt(MAX_MATCH_CELLS)) + 8;
    const middleP = Array.from({ length: n }, (_, i) => i % 7);
    const middleO = Array.from({ length: n }, (_, i) => (i % 5) + 10); // nothing in common with middleP
    const p = [100, 101, ...middleP, 102];
    const o = [100, 101, ...middleO, 102];
    expect(matchedPredictionTokens(p, o)).toBe(3);
    expect(predictionUse(p, p)).toEqual({ numPredicted: p.length, numAccepted: p.length });
  });
});

describe('a text prediction through the engine', () => {
  const make = () => makeEngine({ fake: { blockSize: 4, numBlocks: 64, maxDraftTokens: 4 } });

  it('drafts from predictionText and reports its use in the stats', async () => {
    const plainEngine = make();
    const plainId = plainEngine.createSession({ maxNewTokens: 12, speculation: 'off' });
    plainEngine.send(plainId, [120, 121]);
    await runToIdle(plainEngine);
    const plain = await plainEngine.waitForTurn(plainId);
    expect(plainEngine.sessions.get(plainId).stats.predictionTokens).toBeUndefined();

    // the prediction: the plain output's bytes with 3 wrong ones in the middle
    const predicted = [...plain.outputTokenIds.slice(0, 6), 65, 66, 67, ...plain.outputTokenIds.slice(6)];
    const engine = make();
    const id = engine.createSession({ maxNewTokens: 12, speculation: { maxDraftTokens: 4 }, predictionText: new TextDecoder().decode(new Uint8Array(predicted)) });
    engine.send(id, [120, 121]);
    const events = await runToIdle(engine);
    const drafted = events.reduce((n, e) => n + e.rows.reduce((m, r) => m + (r.numDrafted ?? 0), 0), 0);
    const result = await engine.waitForTurn(id);
    expect(result.outputTokenIds).toEqual(plain.outputTokenIds); // a prediction never changes the output
    expect(drafted).toBeGreaterThan(0);
    const { stats } = engine.sessions.get(id);
    expect(stats.predictionTokens).toBe(predicted.length);
    expect(stats.acceptedPredictionTokens).toBe(plain.outputTokenIds.length);
  });

  it('refuses a prediction that is not a string, and text with token ids', () => {
    const engine = make();
    expect(() => engine.createSession({ predictionText: 5 as unknown as string })).toThrow(/predictionText must be a string/);
    expect(() => engine.createSession({ predictionText: 'a', predictionTokenIds: [1] })).toThrow(/predictionText must be absent/);
  });
});
