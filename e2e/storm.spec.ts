// A cancel/close storm on the real worker and GPU runner in Chromium: 200 random cancels, closes
// and new sessions while 16 generate leave no leaked blocks, no stuck session, no console error.
import { expect, test } from '@playwright/test';
import { loadModel, openHarness } from './harness-page';

test('200 random cancels, closes and new sessions while 16 generate', async ({ page }) => {
  test.setTimeout(900_000);
  await openHarness(page);
  // (loading probes optional files such as model.safetensors.index.json: their 404s come before)
  await loadModel(page, { kind: 'embedded' });
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));

  const result = await page.evaluate(async () => {
    const { api } = window.cohort;
    const prompts = Array.from({ length: 8 }, (_, i) => `Session ${i} says hello and asks for story number ${i * 7}.`);
    const { counts, reasons } = await window.cohort.storm({ numSessions: 16, numOperations: 200, seed: 7, prompts });
    // idle: the last step reports an empty queue, nothing running, every block back
    const deadline = performance.now() + 120_000;
    let last = window.cohort.events.at(-1)!;
    while (performance.now() < deadline && (last.queueDepth > 0 || last.numRunning > 0 || last.kvBlocksUsed > 0)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = window.cohort.events.at(-1)!;
    }
    const after = await api.createSession({ maxNewTokens: 4, sampling: { temperature: 0 } });
    await api.send(after, 'Still here?');
    const check = await api.waitForTurn(after);
    return { counts, reasons, last: { queueDepth: last.queueDepth, numRunning: last.numRunning, kvBlocksUsed: last.kvBlocksUsed }, after: check.finishReason };
  });

  console.log(`storm: ${JSON.stringify(result.counts)}, turns ended: ${JSON.stringify(Object.fromEntries([...new Set(result.reasons)].map((r) => [r, result.reasons.filter((x) => x === r).length])))}`);
  expect(result.counts.cancel + result.counts.close + result.counts.create).toBe(200);
  expect(result.reasons).not.toContain('error');
  expect(result.reasons.filter((r) => r === 'cancelled').length).toBeGreaterThan(10);
  expect(result.last).toEqual({ queueDepth: 0, numRunning: 0, kvBlocksUsed: 0 });
  expect(result.after).not.toBe('error');
  expect(consoleErrors).toEqual([]);
});
