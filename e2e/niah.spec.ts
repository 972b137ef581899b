// Needle-in-a-haystack recall through the browser: sessions of different lengths and needle
// depths join a batched engine at different steps; every one must find its own code and only it.
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS, niahLeaks, niahPassed, type NiahCase } from '../src/protocol/niah';
import type { KvCacheType } from '../src/protocol/api';
import type { RunRecord, TurnSpec } from '../testing/harness/driver';
import { loadModel, openHarness, runTurns, setStepBudget } from './harness-page';

const SEED = 20240611;
/** Step events between one session's send and the next: later sessions join running cohorts. */
const STAGGER_STEPS = 3;

/** Long and short prompts alternate in arrival order: 0, n-1, 1, n-2, ... */
function sendOrder(n: number): number[] {
  const order: number[] = [];
  for (let lo = 0, hi = n - 1; lo <= hi; lo++, hi--) order.push(...(lo === hi ? [lo] : [lo, hi]));
  return order;
}

function turnsFor(cases: NiahCase[], order: number[], staggerSteps: number): TurnSpec[] {
  return order.map((caseIndex, i) => ({
    prompt: cases[caseIndex]!.prompt,
    options: { sampling: { temperature: 0 }, maxNewTokens: NIAH_MAX_NEW_TOKENS },
    afterSteps: i === 0 ? 0 : staggerSteps,
  }));
}

function table(cases: NiahCase[], order: number[], batched: RunRecord, serialized: RunRecord): string {
  const codes = cases.map((c) => c.code);
  const header = ['session', 'prompt tokens', 'needle depth', 'code', 'output', 'pass', 'joined at step', 'same serialized'];
  const lines = order.map((caseIndex, i) => {
    const c = cases[caseIndex]!;
    const turn = batched.turns[i]!;
    const text = turn.result.text;
    const ok = niahPassed(text, c.code) && niahLeaks(text, c.code, codes).length === 0;
    const same = JSON.stringify(turn.result.outputTokenIds) === JSON.stringify(serialized.turns[i]!.result.outputTokenIds);
    return [
      turn.sessionId,
      String(turn.result.promptTokenIds.length),
      `${Math.round((100 * c.needleLine) / c.numLines)}%`,
      c.code,
      JSON.stringify(text),
      ok ? 'yes' : 'NO',
      String(turn.sentAfterSteps),
      same ? 'yes' : 'NO',
    ];
  });
  const rows = [header, ...lines];
  const widths = header.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  return rows.map((r) => r.map((cell, col) => cell.padEnd(widths[col]!)).join(' | ')).join('\n');
}

/**
 * freshSerialized: run the serialized pass on a freshly loaded engine, so its prompts are computed
 * from scratch (prefill chunked differently than in the batched pass). Otherwise the serialized
 * pass finds the prompts' full blocks in the prefix cache and computes each prompt's tail and
 * every decode step alone: it still tests that a row decodes the same alone as in a cohort, at
 * half the cost (software WebGPU spends minutes on these prompts).
 */
async function recallTest(page: Page, testInfo: TestInfo, numSessions: number, freshSerialized: boolean, kvCacheType?: KvCacheType): Promise<void> {
  const cases = makeNiahSuite(SEED, numSessions, 600, 1900);
  const order = sendOrder(numSessions);
  const codes = cases.map((c) => c.code);
  await openHarness(page);
  // the checks below say which rows rode together: the token budget alone sizes chunks
  await setStepBudget(page, null);

  // No kvCacheType: the host's default (f16), as the app and the library load.
  const kv = kvCacheType ? { kvCacheType } : undefined;
  let t0 = Date.now();
  const info = await loadModel(page, undefined, kv);
  expect(info.kvCacheType, 'KV storage type the model loaded with').toBe(kvCacheType ?? 'f16');
  expect(info.kvBytesPerToken).toBeGreaterThan(0);
  const batched = await runTurns(page, { mode: 'batched', turns: turnsFor(cases, order, STAGGER_STEPS) });
  const batchedSeconds = (Date.now() - t0) / 1000;

  t0 = Date.now();
  if (freshSerialized) await loadModel(page, undefined, kv);
  const serialized = await runTurns(page, { mode: 'serialized', turns: turnsFor(cases, order, 0) });
  const serializedSeconds = (Date.now() - t0) / 1000;

  const report = table(cases, order, batched, serialized);
  const promptTokens = batched.turns.reduce((n, t) => n + t.result.promptTokenIds.length, 0);
  const summary =
    `${info.name}, ${info.kvCacheType} KV (${info.kvBytesPerToken} B/token): ${numSessions} sessions, ${promptTokens} prompt tokens; batched ${batched.steps.length} steps ` +
    `(${batchedSeconds.toFixed(0)} s incl. load), serialized ${serialized.steps.length} steps ` +
    `(${serializedSeconds.toFixed(0)} s${freshSerialized ? ' incl. load, from scratch' : ', prompts from the prefix cache'})`;
  console.log(`\n${summary}\n${report}\n`);
  await testInfo.attach(`niah-${numSessions}-${info.kvCacheType}.txt`, { body: `${summary}\n${report}\n`, contentType: 'text/plain' });

  // The run really batched: sessions joined at different steps and rode together with others'
  // prefill chunks; serialized steps carried one row each.
  const joinSteps = new Set(batched.turns.map((t) => t.sentAfterSteps));
  expect(joinSteps.size, 'sessions joined at different steps').toBeGreaterThan(1);
  expect(Math.max(...batched.steps.map((s) => s.rows.length)), 'most rows in one batched step').toBeGreaterThan(1);
  const mixed = batched.steps.some((s) => s.rows.some((r) => r.kind === 'decode') && s.rows.some((r) => r.kind === 'prefill'));
  expect(mixed, 'a step carried decode rows and a joining prefill together').toBe(true);
  expect(Math.max(...serialized.steps.map((s) => s.rows.length))).toBe(1);

  for (const [i, turn] of batched.turns.entries()) {
    expect(turn.result.finishReason, `session ${turn.sessionId}`).not.toBe('error');
    const twin = serialized.turns[i]!;
    expect(twin.result.promptTokenIds, `prompt of session ${turn.sessionId}`).toEqual(turn.result.promptTokenIds);
    expect(twin.result.outputTokenIds, `serialized output of case ${order[i]} token for token`).toEqual(turn.result.outputTokenIds);
  }

  // No session may ever output another session's code.
  const outputs = batched.turns.map((t, i) => ({ text: t.result.text, code: cases[order[i]!]!.code }));
  const leaks = outputs.flatMap((o) => niahLeaks(o.text, o.code, codes).map((leaked) => `${o.code} output ${leaked}`));
  expect(leaks, "no session outputs another session's code").toEqual([]);
  const recall = outputs.filter((o) => niahPassed(o.text, o.code)).length / outputs.length;
  console.log(`recall ${recall.toFixed(3)} (${outputs.length} sessions)`);
  testInfo.annotations.push({ type: 'recall', description: recall.toFixed(3) });
  // The shipped cohort-tiny has held-out recall 1.0 up to ~1,230 tokens and 0.99 at ~1,950 (its
  // model card); COHORT_REQUIRE_RECALL=0 only reports recall, for trying weaker weights.
  if (process.env.COHORT_REQUIRE_RECALL !== '0') expect(recall, 'recall (sessions whose output holds their own code)').toBe(1);
}

test.describe('needle-in-a-haystack recall in the browser', () => {
  test('8 staggered sessions, 600-1,900 tokens: recall 1.0, no leaks, batched == serialized', async ({ page }, testInfo) => {
    // SwiftShader spends minutes on ~10k prompt tokens; the serialized pass reuses their KV.
    test.setTimeout(20 * 60_000);
    await recallTest(page, testInfo, 8, false);
  });

  test('16 staggered sessions, serialized pass from scratch', async ({ page }, testInfo) => {
    // ~7.5 minutes on SwiftShader: 16 prompts of 580-1,900 tokens prefilled twice.
    test.setTimeout(120 * 60_000);
    await recallTest(page, testInfo, 16, true);
  });

  test('8 staggered sessions with q8_0 KV: recall 1.0, no leaks, batched == serialized', async ({ page }, testInfo) => {
    test.setTimeout(20 * 60_000);
    await recallTest(page, testInfo, 8, false, 'q8_0');
  });

  test('16 staggered sessions with q8_0 KV, serialized pass from scratch', async ({ page }, testInfo) => {
    test.setTimeout(120 * 60_000);
    await recallTest(page, testInfo, 16, true, 'q8_0');
  });
});
