// The playground UI on the embedded model in a real Chromium: four sessions streaming side by
// side, the cohort timeline, the mode switch, a corrupt model drop, and the NIAH preset.
import { readFileSync } from 'node:fs';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { niahLeaks, niahPassed } from '../src/protocol/niah';

async function openWithModel(page: Page): Promise<string> {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto('/');
  const modelInfo = page.getByTestId('model-info');
  // A failed default load shows its reason here; report it instead of timing out blind.
  await expect(page.locator('[data-testid=model-info][data-state=ready], [data-testid=model-error]').first()).toBeVisible();
  if ((await modelInfo.getAttribute('data-state')) !== 'ready') {
    throw new Error(`the default model did not load: ${await page.getByTestId('model-error').textContent()}`);
  }
  const name = (await modelInfo.getAttribute('data-model-name')) ?? '';
  expect(name).toContain('cohort-tiny');
  return name;
}

/** Records, per pane, every distinct length its latest output had, as the DOM changes. */
async function watchOutputs(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Record<string, number[]> = {};
    (window as unknown as { __outputLengths: Record<string, number[]> }).__outputLengths = seen;
    const record = () => {
      for (const pane of document.querySelectorAll('[data-testid=session-pane]')) {
        const id = pane.getAttribute('data-session-id') ?? '';
        const length = pane.querySelector('[data-testid=session-output]')?.textContent?.length ?? 0;
        const lengths = (seen[id] ??= []);
        if (length > 0 && lengths[lengths.length - 1] !== length) lengths.push(length);
      }
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

async function outputLengths(page: Page): Promise<Record<string, number[]>> {
  return page.evaluate(() => (window as unknown as { __outputLengths: Record<string, number[]> }).__outputLengths);
}

async function send(pane: Locator, text: string): Promise<void> {
  await expect(pane.getByTestId('session-send')).toBeVisible();
  await pane.getByTestId('session-input').fill(text);
  await pane.getByTestId('session-input').press('Enter');
}

async function expectFinished(pane: Locator): Promise<void> {
  await expect(pane).toHaveAttribute('data-state', /^(done|error|cancelled)$/);
  expect(await pane.getAttribute('data-state'), (await pane.getByTestId('session-error').allTextContents()).join(' ')).toBe('done');
}

test('four sessions stream side by side, the mode switch takes effect, and a corrupt model leaves the old one serving', async ({ page }, testInfo) => {
  test.setTimeout(900_000);
  const modelName = await openWithModel(page);
  await watchOutputs(page);

  await test.step('open four sessions and send to each', async () => {
    await page.getByTestId('add-n-count').fill('4');
    await page.getByTestId('add-n-sessions').click();
    const panes = page.getByTestId('session-pane');
    await expect(panes).toHaveCount(4);
    for (let i = 0; i < 4; i++) {
      const pane = panes.nth(i);
      await pane.getByTestId('session-settings-toggle').click();
      await pane.getByTestId('setting-maxNewTokens').fill('24');
      await pane.getByTestId('session-settings-toggle').click();
      await send(pane, `Note ${i}: say something about the number ${i + 1}.`);
    }
    for (let i = 0; i < 4; i++) {
      await expect(panes.nth(i).getByTestId('session-output')).not.toHaveText('');
    }
    for (let i = 0; i < 4; i++) await expectFinished(panes.nth(i));
  });

  await test.step('tokens arrived piece by piece in every pane', async () => {
    const panes = page.getByTestId('session-pane');
    const lengths = await outputLengths(page);
    for (let i = 0; i < 4; i++) {
      const pane = panes.nth(i);
      const id = (await pane.getAttribute('data-session-id')) ?? '';
      const numTokens = Number(await pane.getAttribute('data-num-tokens'));
      expect(numTokens).toBeGreaterThan(0);
      // A reply of several tokens that appeared in one piece was not streamed.
      if (numTokens >= 4) expect(lengths[id]?.length ?? 0, `output lengths seen in ${id}: ${lengths[id]}`).toBeGreaterThanOrEqual(2);
    }
  });

  await test.step('the timeline drew a row for every session', async () => {
    const timeline = page.getByTestId('cohort-timeline');
    await expect.poll(async () => Number(await timeline.getAttribute('data-rows'))).toBeGreaterThanOrEqual(4);
    expect(Number(await timeline.getAttribute('data-steps'))).toBeGreaterThan(0);
    const box = await timeline.boundingBox();
    await page.mouse.move(box!.x + 70, box!.y + box!.height / 2); // first step column, right of the labels
    await expect(page.getByTestId('timeline-tooltip')).toContainText('Step');
    await page.mouse.move(0, 0);
  });

  await test.step('the mode switch changes the mode the steps report', async () => {
    const panes = page.getByTestId('session-pane');
    const engineMode = page.getByTestId('engine-mode');
    await expect(engineMode).toHaveAttribute('data-mode', 'batched');
    await page.getByTestId('mode-switch').getByRole('button', { name: 'Serialized' }).click();
    await send(panes.nth(0), 'And once more, please.');
    await send(panes.nth(1), 'One more time.');
    await expect(engineMode).toHaveAttribute('data-mode', 'serialized');
    await expectFinished(panes.nth(0));
    await expectFinished(panes.nth(1));
    await page.getByTestId('mode-switch').getByRole('button', { name: 'Batched' }).click();
    await send(panes.nth(2), 'Back to batching.');
    await expect(engineMode).toHaveAttribute('data-mode', 'batched');
    await expectFinished(panes.nth(2));
  });

  await test.step('a corrupt .gguf dropped on the page shows an error and the old model keeps serving', async () => {
    await page.evaluate(() => {
      const garbage = new Uint8Array(4096).map((_, i) => (i * 131 + 7) & 0xff);
      const data = new DataTransfer();
      data.items.add(new File([garbage], 'corrupt.gguf', { type: 'application/octet-stream' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    });
    await expect(page.getByTestId('model-error')).toContainText('corrupt.gguf');
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-model-name', modelName);
    const pane = page.getByTestId('session-pane').nth(3);
    const before = (await pane.getByTestId('session-transcript').textContent()) ?? '';
    await send(pane, 'Are you still there?');
    await expectFinished(pane);
    expect(((await pane.getByTestId('session-transcript').textContent()) ?? '').length).toBeGreaterThan(before.length + 'Are you still there?'.length);
    await expect(pane.getByTestId('session-output')).not.toHaveText('');
  });

  await test.step('screenshot of the main view at 1280x800', async () => {
    await page.getByTestId('session-grid').evaluate((grid) => grid.scrollTo(0, 0));
    const path = testInfo.outputPath('ui-main-view.png');
    await page.screenshot({ path });
    await testInfo.attach('main view 1280x800', { path, contentType: 'image/png' });
  });
});

test('the NIAH preset opens N staggered greedy sessions and marks each from its own output', async ({ page }, testInfo) => {
  test.setTimeout(900_000);
  await openWithModel(page);
  await page.getByTestId('niah-count').fill('4');
  await page.getByTestId('niah-length').selectOption('600');
  // the preset's one setting left to the person: speculation, from the settings for new sessions
  await page.getByTestId('new-session-settings-toggle').click();
  await page.getByTestId('new-session-settings').getByTestId('setting-speculation').selectOption('off');
  await page.getByTestId('new-session-settings-toggle').click();
  await page.getByTestId('niah-preset').click();
  const panes = page.getByTestId('session-pane');
  await expect(panes).toHaveCount(4);
  await expect(page.getByTestId('niah-result')).toHaveCount(4);
  const recall = page.getByTestId('niah-recall');
  await expect(recall).not.toHaveAttribute('data-recall', '');

  const results = await panes.evaluateAll((els) =>
    els.map((el) => ({
      state: el.getAttribute('data-state'),
      settings: el.querySelector('[data-testid=session-settings-summary]')?.textContent ?? '',
      code: el.querySelector('[data-testid=niah-result]')?.getAttribute('data-code') ?? '',
      pass: el.querySelector('[data-testid=niah-result]')?.getAttribute('data-pass'),
      prompt: el.querySelector('.msg.user')?.textContent ?? '',
      output: el.querySelector('[data-testid=session-output]')?.textContent ?? '',
    })),
  );
  await testInfo.attach('niah results', { body: JSON.stringify(results, null, 2), contentType: 'application/json' });
  const codes = results.map((r) => r.code);
  expect(new Set(codes).size).toBe(4);
  for (const r of results) {
    expect(r.state).toBe('done');
    expect(r.settings).toContain('greedy · max 24');
    expect(r.settings).toContain('no drafts');
    expect(r.prompt).toContain(`IMPORTANT: the secret code is ${r.code}.`);
    // The mark (judged from the engine's final text) must agree with what the pane streamed.
    const leaks = niahLeaks(r.output, r.code, codes);
    expect(leaks, `${r.code} output another session's code`).toEqual([]);
    expect(r.pass).toBe(String(niahPassed(r.output, r.code)));
  }
  const numPassed = results.filter((r) => r.pass === 'true').length;
  await expect(recall).toHaveAttribute('data-recall', String(numPassed / 4));
  testInfo.annotations.push({ type: 'niah recall', description: `${numPassed}/4 (recall itself is asserted by e2e/niah.spec.ts)` });
});

test('a model loaded from a URL is downloaded into the browser cache, listed with its size, and deletable', async ({ page }) => {
  test.setTimeout(300_000);
  await openWithModel(page);
  const cache = page.getByTestId('model-cache');
  await page.getByTestId('source-tab-url').click();
  // Same-origin is the one non-https origin the worker accepts; the file is the embedded model's Q8_0 GGUF.
  await page.getByTestId('model-url').fill('/models/cohort-tiny/cohort-tiny-q8_0.gguf');
  await page.getByTestId('model-url').press('Enter');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-model-name', /q8_0|cohort-tiny/i);
  const entry = cache.getByTestId('cache-entry').filter({ hasText: 'cohort-tiny-q8_0.gguf' });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText('KB'); // 917,792 bytes
  const stored = await page.evaluate(async () => {
    const hit = await (await caches.open('cohort-models')).match(new URL('/models/cohort-tiny/cohort-tiny-q8_0.gguf', location.href).href);
    return hit ? (await hit.blob()).size : -1;
  });
  expect(stored).toBe(917_792);
  await entry.getByRole('button', { name: /Delete/ }).click();
  await expect(cache.getByTestId('cache-entry').filter({ hasText: 'cohort-tiny-q8_0.gguf' })).toHaveCount(0);
});

test('a dead engine worker is reported, and a restart reloads the model with every transcript kept', async ({ page }) => {
  test.setTimeout(600_000);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto('/?watchdogMs=3000');
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready', { timeout: 120_000 });
  await page.getByTestId('add-n-count').fill('1');
  await page.getByTestId('add-n-sessions').click();
  const pane = page.getByTestId('session-pane').first();
  await send(pane, 'Hello there.');
  await expectFinished(pane);
  const transcript = (await pane.getByTestId('session-transcript').textContent()) ?? '';

  await page.evaluate(() => (globalThis as unknown as { cohortDebug: { closeWorker(): Promise<void> } }).cohortDebug.closeWorker());
  await expect(page.getByTestId('worker-dead')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('restart-engine').click();
  await expect(page.getByTestId('worker-dead')).toHaveCount(0);
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready', { timeout: 120_000 });
  await expect(pane.getByTestId('session-transcript')).toHaveText(transcript);

  await send(pane, 'And again.');
  await expectFinished(pane);
  const after = (await pane.getByTestId('session-transcript').textContent()) ?? '';
  expect(after.startsWith(transcript)).toBe(true);
  expect(after).toContain('And again.');
});

test('a Hugging Face repo is listed, a GGUF in it picked, downloaded into the cache and served', async ({ page }) => {
  test.setTimeout(300_000);
  // huggingface.co answered from the embedded model's files: the page and worker code paths are
  // the real ones (listing API, resolve URLs, Cache Storage), only the network is local.
  const files = new Map(['cohort-tiny-q8_0.gguf', 'cohort-tiny-f32.gguf', 'config.json', 'tokenizer.json'].map((name) => [name, readFileSync(`public/models/cohort-tiny/${name}`)]));
  const seen: string[] = [];
  await page.route('https://huggingface.co/**', async (route) => {
    const url = new URL(route.request().url());
    seen.push(url.pathname);
    if (url.pathname === '/api/models/cohort/tiny-test') {
      return route.fulfill({ json: { id: 'cohort/tiny-test', siblings: [...files].map(([name, bytes]) => ({ rfilename: name, size: bytes.length })) } });
    }
    const name = url.pathname.match(/^\/cohort\/tiny-test\/resolve\/main\/(.+)$/)?.[1];
    const body = name ? files.get(decodeURIComponent(name)) : undefined;
    if (!body) return route.fulfill({ status: 404, body: 'not found' });
    const range = route.request().headers()['range']?.match(/bytes=(\d+)-(\d+)/);
    if (range) {
      const [start, end] = [Number(range[1]), Math.min(Number(range[2]), body.length - 1)];
      return route.fulfill({ status: 206, headers: { 'content-range': `bytes ${start}-${end}/${body.length}`, 'access-control-allow-origin': '*' }, body: body.subarray(start, end + 1) });
    }
    return route.fulfill({ status: 200, headers: { 'content-length': String(body.length), 'access-control-allow-origin': '*' }, body });
  });
  await openWithModel(page);
  await page.getByTestId('source-tab-huggingface').click();
  await page.getByTestId('hf-repo').fill('cohort/tiny-test');
  await page.getByRole('button', { name: 'List files' }).click();
  const picker = page.locator('select[data-testid=hf-file]');
  await expect(picker.locator('option')).toHaveText(['cohort-tiny-f32.gguf (3.26 MB)', 'cohort-tiny-q8_0.gguf (896 KB)']);
  await picker.selectOption('cohort-tiny-q8_0.gguf');
  await page.getByRole('button', { name: 'Load', exact: true }).click();
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('model-name')).toContainText(/q8_0|cohort/i);
  expect(seen).toContain('/cohort/tiny-test/resolve/main/cohort-tiny-q8_0.gguf');
  await expect(page.getByTestId('model-cache').getByTestId('cache-entry').filter({ hasText: 'cohort-tiny-q8_0.gguf' })).toHaveCount(1);

  await page.getByTestId('add-n-count').fill('1');
  await page.getByTestId('add-n-sessions').click();
  const pane = page.getByTestId('session-pane').last();
  await send(pane, 'Hello from the hub.');
  await expectFinished(pane);
});
