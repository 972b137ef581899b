// The playground on a real llama-server (the embedded model's GGUF, 8 slots) through the built page:
// four sessions, NIAH x 8 recall, the server's busy slots in the activity panel, abort, errors.
import { createServer, type Server } from 'node:http';
import { expect, test, type Page } from '@playwright/test';
import { niahLeaks, niahPrompt } from '../src/protocol/niah';
import { freePort, startLlamaServer, type RunningLlamaServer } from '../src/remote/testing/llama-server-fixtures';

let server: RunningLlamaServer;
let locked: RunningLlamaServer;
/** A server that answers but sends no CORS headers: the browser must refuse it for this page. */
let noCors: Server;
let noCorsUrl: string;

test.beforeAll(async () => {
  // one thread and 8-token decode calls: on idle cores the tiny model's NIAH prefills would
  // otherwise end between two of the page's 250 ms samples, and no busy slot could be seen
  server = await startLlamaServer({ numSlots: 8, slotContext: 2560, threads: 1, batchSize: 8 });
  locked = await startLlamaServer({ numSlots: 1, slotContext: 512, apiKey: 'the-right-key' });
  const port = await freePort();
  noCors = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"data":[{"id":"x"}]}'));
  await new Promise<void>((resolve) => noCors.listen(port, '127.0.0.1', resolve));
  noCorsUrl = `http://127.0.0.1:${port}`;
});

test.afterAll(async () => {
  await Promise.all([server?.stop(), locked?.stop(), new Promise((r) => noCors?.close(r))]);
});

async function openWithModel(page: Page): Promise<void> {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-model-name', /cohort-tiny/);
}

async function connect(page: Page, baseUrl: string, apiKey = ''): Promise<void> {
  const card = page.getByTestId('server-card');
  if ((await card.getAttribute('open')) === null) await card.locator('summary').click();
  await page.getByTestId('server-url').fill(baseUrl);
  await page.getByTestId('server-key').fill(apiKey);
  await page.getByTestId('server-connect').click();
}

/** Records the highest "busy slots" the activity panel showed, as the DOM changes. */
async function watchBusySlots(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __maxBusy: number };
    w.__maxBusy = 0;
    new MutationObserver(() => {
      const text = document.querySelector('[data-testid=server-busy]')?.textContent ?? '';
      w.__maxBusy = Math.max(w.__maxBusy, Number.parseInt(text, 10) || 0);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

async function slotsBusy(): Promise<number> {
  const slots = (await (await fetch(`${server.baseUrl}/slots`)).json()) as Array<{ is_processing: boolean }>;
  return slots.filter((s) => s.is_processing).length;
}

test('a wrong URL, a 401 and a CORS refusal each say why, and the local model keeps serving', async ({ page }) => {
  test.setTimeout(300_000);
  await openWithModel(page);
  const error = page.getByTestId('model-error');
  await connect(page, `http://127.0.0.1:${await freePort()}`);
  await expect(error).toContainText(/could not be reached|Nothing is listening/);
  await expect(error).toContainText('still serving');
  await connect(page, locked.baseUrl, 'a-wrong-key');
  await expect(error).toContainText('refused the API key (401');
  await connect(page, noCorsUrl);
  await expect(error).toContainText("refused this page's origin");
  await expect(error).toContainText('CORS');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-model-name', /cohort-tiny \(embedded\)/);
  // the local engine still answers
  await page.getByTestId('add-n-count').fill('1');
  await page.getByTestId('add-n-sessions').click();
  const pane = page.getByTestId('session-pane').first();
  await pane.getByTestId('session-input').fill('Repeat: abc');
  await pane.getByTestId('session-input').press('Enter');
  await expect(pane).toHaveAttribute('data-state', 'done');
  await expect(page.getByTestId('live-stats')).not.toHaveAttribute('data-source', 'server');
  // and the right key connects
  await connect(page, locked.baseUrl, 'the-right-key');
  await expect(page.getByTestId('server-kind')).toHaveText('llama.cpp');
});

test('four sessions and NIAH x 8 on llama-server: each its own answer, the busy slots shown, abort frees a slot', async ({ page }, testInfo) => {
  test.setTimeout(600_000);
  await openWithModel(page);
  await connect(page, server.baseUrl);
  await expect(page.getByTestId('server-kind')).toHaveText('llama.cpp');
  await expect(page.getByTestId('server-slots')).toHaveText('8');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-model-name', 'cohort-tiny');
  await watchBusySlots(page);

  await test.step('four sessions stream side by side', async () => {
    await page.getByTestId('add-n-count').fill('4');
    await page.getByTestId('add-n-sessions').click();
    const panes = page.getByTestId('session-pane');
    await expect(panes).toHaveCount(4);
    for (let i = 0; i < 4; i++) {
      await panes.nth(i).getByTestId('session-input').fill(`Repeat: ${['kiwi', 'plum', 'fig', 'lime'][i]} ${i}`);
      await panes.nth(i).getByTestId('session-input').press('Enter');
    }
    for (let i = 0; i < 4; i++) await expect(panes.nth(i)).toHaveAttribute('data-state', 'done');
    for (let i = 0; i < 4; i++) await expect(panes.nth(i).getByTestId('session-output')).not.toHaveText('');
    await expect(page.getByTestId('live-stats')).toHaveAttribute('data-source', 'server');
    await expect(page.getByTestId('kv-chart')).toHaveAttribute('data-source', 'server');
    await expect(page.getByText('llama.cpp slots and deferred requests (sampled)')).toBeVisible();
  });

  await test.step('NIAH x 8: recall 1.0, each session its own code, the server busy with several slots', async () => {
    await page.getByTestId('niah-count').fill('8');
    await page.getByTestId('niah-length').selectOption('1200');
    await page.getByTestId('niah-preset').click();
    await expect(page.getByTestId('niah-result')).toHaveCount(8);
    const recall = page.getByTestId('niah-recall');
    await expect(recall).toHaveAttribute('data-recall', '1');
    const results = await page.getByTestId('session-pane').evaluateAll((els) =>
      els
        .filter((el) => el.querySelector('[data-testid=niah-result]'))
        .map((el) => ({ code: el.querySelector('[data-testid=niah-result]')?.getAttribute('data-code') ?? '', output: el.querySelector('[data-testid=session-output]')?.textContent ?? '' })),
    );
    const codes = results.map((r) => r.code);
    expect(new Set(codes).size).toBe(8);
    for (const r of results) expect(niahLeaks(r.output, r.code, codes)).toEqual([]);
    const maxBusy = await page.evaluate(() => (window as unknown as { __maxBusy: number }).__maxBusy);
    testInfo.annotations.push({ type: 'max busy slots shown', description: String(maxBusy) });
    expect(maxBusy).toBeGreaterThan(1);
  });

  await test.step('stopping a turn frees its slot', async () => {
    await page.getByTestId('add-n-count').fill('1');
    await page.getByTestId('add-n-sessions').click();
    const pane = page.getByTestId('session-pane').last();
    await pane.getByTestId('session-input').fill(niahPrompt(24, 12, 'OAK-4321'));
    await pane.getByTestId('session-input').press('Enter');
    await expect.poll(slotsBusy, { timeout: 30_000, intervals: [20] }).toBeGreaterThan(0);
    await pane.getByTestId('session-cancel').click();
    await expect(pane).toHaveAttribute('data-state', 'cancelled');
    await expect.poll(slotsBusy, { timeout: 15_000 }).toBe(0);
  });
});
