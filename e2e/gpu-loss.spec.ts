// GPU device loss in a real Chromium: the debug hook destroys the worker's device mid-generation;
// the worker reports it, re-creates the device, reloads the model, and serves exactly as before.
import { expect, test } from '@playwright/test';
import { loadModel, openHarness } from './harness-page';

const prompts = ['Tell me about rivers.', 'Count with me: one, two,', 'What is the secret code?'];

test('a lost GPU device is re-created, the model reloaded, and serving goes on unchanged', async ({ page }) => {
  test.setTimeout(600_000);
  await openHarness(page);
  await loadModel(page, { kind: 'embedded' });

  const result = await page.evaluate(async (texts) => {
    const { api } = window.cohort;
    const greedy = { sampling: { temperature: 0 }, maxNewTokens: 48 };
    const turn = async (text: string) => {
      const id = await api.createSession(greedy);
      await api.send(id, text);
      return id;
    };
    // Before: the reference outputs.
    const before = [];
    for (const text of texts) before.push((await api.waitForTurn(await turn(text))).outputTokenIds.join(','));

    // During: three sessions generating together when the device goes.
    const ids = await Promise.all(texts.map(turn));
    const turns = ids.map((id) => api.waitForTurn(id));
    const firstStep = window.cohort.events.length;
    while (window.cohort.events.length < firstStep + 3) await new Promise((r) => setTimeout(r, 20));
    await api.debugLoseDevice();
    const during = await Promise.all(turns.map((t) => t.then((r) => ({ reason: r.finishReason, error: r.error ?? '' }))));
    while (!window.cohort.notices.some((n) => n.kind !== 'gpu-lost')) await new Promise((r) => setTimeout(r, 50));

    // After: the same prompts in new sessions, and a new turn in a session that lived through it.
    const after = [];
    for (const text of texts) after.push((await api.waitForTurn(await turn(text))).outputTokenIds.join(','));
    await api.send(ids[0]!, 'And again?');
    const survivor = await api.waitForTurn(ids[0]!);
    return { before, after, during, notices: window.cohort.notices, survivor: { reason: survivor.finishReason, tokens: survivor.outputTokenIds.length } };
  }, prompts);

  console.log(`turns in flight at the loss: ${JSON.stringify(result.during)}`);
  expect(result.notices.map((n) => n.kind)).toEqual(['gpu-lost', 'gpu-restored']);
  expect(result.notices[0]!.message).toMatch(/GPU device lost/);
  // Turns caught mid-step end with the runner's error; any that were not carry on to the end.
  for (const d of result.during) expect(['error', 'length', 'eos', 'stop'], d.error).toContain(d.reason);
  expect(result.after).toEqual(result.before);
  expect(result.survivor.reason).not.toBe('error');
  expect(result.survivor.tokens).toBeGreaterThan(0);
});
