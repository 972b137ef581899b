// The playground as a person uses it, on the embedded model: transcripts that scroll and fold,
// nothing lost on reload or model reload or while a model loads, the layout at 1440x900 and
// 390x844, the live header.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page, type TestInfo } from '@playwright/test';
import { openPlayground as open, send, expectDone } from './playground-page';
import { niahLinesFor, niahPrompt } from '../src/protocol/niah';

/** Each message's text, for comparing transcripts across reloads. */
async function messages(pane: Locator): Promise<string[]> {
  return pane.locator('.msg .msg-text').allTextContents();
}

async function screenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}

test('desktop: examples, scrolling transcripts, chat basics, a refused message, reload and model reload keep everything', async ({ page, context }, testInfo) => {
  test.setTimeout(900_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await open(page, 1440, 900);

  await test.step('the header says what the embedded model does; diagnostics are folded; the activity panel is a fixed share', async () => {
    await expect(page.getByTestId('header-skills')).toContainText('cannot chat');
    await expect(page.getByTestId('model-skills')).toContainText('0.85M-parameter');
    await expect(page.getByTestId('gpu-limits')).toBeHidden();
    const panel = await page.getByTestId('cohort-panel').boundingBox();
    expect(panel!.height).toBeLessThan(900 * 0.4);
    await page.getByTestId('cohort-toggle').click();
    expect((await page.getByTestId('cohort-panel').boundingBox())!.height).toBeLessThan(60);
    await page.getByTestId('cohort-toggle').click();
    await page.getByTestId('cohort-resize').focus();
    await page.keyboard.press('ArrowDown');
    expect((await page.getByTestId('cohort-panel').boundingBox())!.height).toBeLessThan(panel!.height);
  });

  const pane = page.getByTestId('session-pane').first();
  await test.step('a one-click example finds its code, and the header shows aggregate tok/s while it runs', async () => {
    await page.getByTestId('example-niah-short').click();
    await expect(page.getByTestId('header-tps')).toBeVisible();
    expect(Number(await page.getByTestId('header-tps').getAttribute('data-tps'))).toBeGreaterThan(0);
    await expectDone(pane);
    const prompt = (await pane.locator('.msg.user .msg-text').first().textContent()) ?? '';
    const code = /the secret code is ([A-Z]+-\d{4})\./.exec(prompt)?.[1];
    expect(code).toBeTruthy();
    await expect(pane.getByTestId('session-output')).toContainText(code!);
    // The haystack folds behind "show more"; its full text stays in the page.
    await expect(pane.locator('.msg.user').first()).toHaveAttribute('data-folded', 'true');
    await pane.getByTestId('msg-fold').first().click();
    await expect(pane.locator('.msg.user').first()).not.toHaveAttribute('data-folded', 'true');
    await pane.getByTestId('msg-fold').first().click();
  });

  await test.step('many messages: the transcript scrolls, no message shrinks, and it follows the newest unless scrolled up', async () => {
    for (const text of ['Hello', 'What is 2+2?', 'Again', 'Once more']) {
      await send(pane, text);
      await expectDone(pane);
    }
    const transcript = pane.getByTestId('session-transcript');
    const metrics = await transcript.evaluate((el) => ({
      scrollable: el.scrollHeight > el.clientHeight + 20,
      atBottom: el.scrollHeight - el.scrollTop - el.clientHeight < 24,
      minHeight: Math.min(...[...el.querySelectorAll('.msg')].map((m) => m.getBoundingClientRect().height)),
    }));
    expect(metrics.scrollable).toBe(true);
    expect(metrics.atBottom).toBe(true);
    expect(metrics.minHeight).toBeGreaterThan(14);
    await transcript.evaluate((el) => el.scrollTo(0, 0));
    await send(pane, 'Stay where I am');
    await expectDone(pane);
    expect(await transcript.evaluate((el) => el.scrollTop)).toBe(0);
  });

  await test.step('copy, regenerate, edit and resend', async () => {
    const before = await messages(pane);
    await pane.getByTestId('msg-copy').last().click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(before[before.length - 1]);
    await pane.getByTestId('msg-regenerate').click();
    await expectDone(pane);
    expect((await messages(pane)).length).toBe(before.length);
    await pane.getByTestId('msg-edit').last().click();
    await expect(pane.getByTestId('session-input')).toHaveValue('Stay where I am');
    expect((await messages(pane)).length).toBe(before.length - 2);
    await pane.getByTestId('session-input').fill('Edited');
    await pane.getByTestId('session-input').press('Enter');
    await expectDone(pane);
    const after = await messages(pane);
    expect(after.length).toBe(before.length);
    expect(after[after.length - 2]).toBe('Edited');
  });

  await test.step('a refused 20,000-character message stays in the composer, with no empty bubble', async () => {
    const before = await messages(pane);
    const long = 'x'.repeat(20_000);
    await pane.getByTestId('session-input').fill(long);
    await pane.getByTestId('session-input').press('Enter');
    await expect(pane.getByTestId('session-error')).toBeVisible();
    await expect(pane.getByTestId('session-input')).toHaveValue(long);
    expect(await messages(pane)).toEqual(before);
    await pane.getByTestId('session-input').fill('');
  });

  await test.step('"+ Session" focuses its composer; Escape closes the settings popover; stop all cancels', async () => {
    await page.getByTestId('add-session').click();
    const second = page.getByTestId('session-pane').nth(1);
    await expect(second.getByTestId('session-input')).toBeFocused();
    await page.getByTestId('new-session-settings-toggle').click();
    await expect(page.getByTestId('new-session-settings')).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('new-session-settings')).toHaveCount(0);
    await send(second, niahPrompt(niahLinesFor(1800), 3, 'OAK-4321'));
    await expect(page.getByTestId('stop-all')).toBeEnabled();
    await page.getByTestId('stop-all').click();
    await expect(second).toHaveAttribute('data-state', 'cancelled');
  });

  await test.step('screenshot at 1440x900', async () => {
    await screenshot(page, testInfo, 'playground 1440x900');
  });

  const saved = await messages(pane);
  await test.step('a reload brings back every pane and transcript, and the next message carries the history', async () => {
    await expect(page.locator('html')).toHaveAttribute('data-panes-pending', 'false'); // saved a moment after the last change
    await page.reload();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('session-pane')).toHaveCount(2);
    expect(await messages(pane)).toEqual(saved);
    await send(pane, 'After the reload');
    await expectDone(pane);
    expect((await messages(pane)).slice(0, saved.length)).toEqual(saved);
  });

  await test.step('loading the default model again keeps every transcript; a load that would cut a turn asks first', async () => {
    const before = await messages(pane);
    await page.getByTestId('load-embedded').click();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'true');
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'false');
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('session-pane')).toHaveCount(2);
    expect(await messages(pane)).toEqual(before);
    await send(pane, 'On the reloaded model');
    await expectDone(pane);
    expect((await messages(pane)).slice(0, before.length)).toEqual(before);

    const second = page.getByTestId('session-pane').nth(1);
    await send(second, niahPrompt(niahLinesFor(1800), 3, 'OAK-4321'));
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.dismiss();
    });
    await page.getByTestId('load-embedded').click();
    await expect.poll(() => asked).toContain('generating');
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'false');
    await expect(second).toHaveAttribute('data-state', /^(waiting|prefill|decode)$/);
    await page.getByTestId('stop-all').click();
    await expect(second).toHaveAttribute('data-state', /^(cancelled|done)$/);
  });
});

test('a message sent while the model loads waits in its pane, goes out when the load ends, comes back with the reason when a load fails, and outlives reloads until sent', async ({ page }) => {
  test.setTimeout(600_000);
  // The embedded model's files wait for the test to let them through, so there is time to type;
  // once `failing` is set they answer 404, as a broken download would.
  let release: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (release = resolve));
  let failing = false;
  await page.route('**/models/cohort-tiny/**', async (route) => {
    await gate;
    if (failing) return route.fulfill({ status: 404, body: 'not found' });
    return route.continue();
  });
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/');
  const pane = page.getByTestId('session-pane').first();
  const held = pane.getByTestId('msg-held');

  await test.step('during the first load: shown as a user message waiting for the model, then sent when it is ready', async () => {
    await page.getByTestId('add-session').click();
    await pane.getByTestId('session-input').fill('Hello while loading');
    await pane.getByTestId('session-input').press('Enter');
    await expect(held).toContainText('Hello while loading');
    await expect(held.getByRole('status')).toHaveText('waiting for the model to load');
    await expect(pane).toHaveAttribute('data-waiting-for-model', 'true');
    await expect(pane.getByTestId('session-input')).toHaveValue('');
    await expect(pane.getByTestId('session-error')).toHaveCount(0);
    await expect(page.getByTestId('model-info')).not.toHaveAttribute('data-state', 'ready');
    release();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
    await expectDone(pane);
    await expect(held).toHaveCount(0);
    expect(await pane.locator('.msg.user .msg-text').allTextContents()).toEqual(['Hello while loading']);
  });

  await test.step('during a load the person starts that fails: back in the composer with the load\'s reason', async () => {
    gate = new Promise<void>((resolve) => (release = resolve));
    failing = true;
    await page.getByTestId('load-embedded').click();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'true');
    await pane.getByTestId('session-input').fill('Sent during the swap');
    await pane.getByTestId('session-input').press('Enter');
    await expect(held).toContainText('Sent during the swap');
    release();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'false');
    await expect(held).toHaveCount(0);
    await expect(pane.getByTestId('session-input')).toHaveValue('Sent during the swap');
    await expect(pane.getByTestId('session-error')).toContainText('Could not load');
    await expect(pane.getByTestId('session-error')).toContainText('still serving');
    expect(await pane.locator('.msg.user .msg-text').allTextContents()).toEqual(['Hello while loading']);
  });

  await test.step('a message held for the model is back in the composer after a reload, still there after a second, and gone once sent', async () => {
    gate = new Promise<void>((resolve) => (release = resolve));
    failing = false;
    await page.getByTestId('load-embedded').click();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'true');
    await pane.getByTestId('session-input').press('Enter');
    await expect(held).toContainText('Sent during the swap');
    // a save begun after the message was held has it (one may have been under way already)
    const saves = () => page.evaluate(() => Number(document.documentElement.dataset.panesSaves));
    const heldAt = await saves();
    await expect.poll(saves).toBeGreaterThan(heldAt + 1);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    release();
    for (let reload = 1; reload <= 2; reload++) {
      await page.reload();
      await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
      await expect(pane.getByTestId('session-input')).toHaveValue('Sent during the swap');
    }
    await pane.getByTestId('session-input').press('Enter');
    await expectDone(pane);
    await expect(pane.getByTestId('session-input')).toHaveValue('');
    await expect(page.locator('html')).toHaveAttribute('data-panes-pending', 'false');
    await page.reload();
    await expect(pane.locator('.msg.user .msg-text')).toHaveText(['Hello while loading', 'Sent during the swap']);
    await expect(pane.getByTestId('session-input')).toHaveValue('');
  });
});

test('phone: 390x844 fits the viewport, the sidebar is a drawer, panes stack and the composer is on screen', async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  await open(page, 390, 844);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await expect(page.getByTestId('model-info')).toBeHidden();
  await page.getByTestId('drawer-toggle').click();
  await expect(page.getByTestId('model-info')).toBeInViewport();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('model-info')).toBeHidden();
  await screenshot(page, testInfo, 'playground 390x844 empty');

  await page.getByTestId('add-n-count').fill('2');
  await page.getByTestId('add-n-sessions').click();
  const panes = page.getByTestId('session-pane');
  await expect(panes).toHaveCount(2);
  const [a, b] = [await panes.nth(0).boundingBox(), await panes.nth(1).boundingBox()];
  expect(b!.y).toBeGreaterThan(a!.y + a!.height - 1); // stacked, not side by side
  await expect(panes.nth(0).getByTestId('session-input')).toBeInViewport({ ratio: 1 });
  await send(panes.nth(0), 'Hello');
  await expectDone(panes.nth(0));
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await screenshot(page, testInfo, 'playground 390x844');
});

test('accessibility: axe finds no serious or critical issue on the main view, empty and with a pane', async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  await open(page, 1440, 900);
  const check = async (name: string) => {
    const results = await new AxeBuilder({ page }).analyze();
    const bad = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    await testInfo.attach(`axe ${name}`, { body: JSON.stringify(results.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })), null, 2), contentType: 'application/json' });
    expect(bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`)).toEqual([]);
  };
  await check('empty');
  // the KV memory control is labelled, and the card counts the loaded pool's sessions
  await expect(page.getByLabel('KV cache type')).toHaveValue('f16');
  await expect(page.getByLabel('KV pool size (MiB)')).toHaveValue('');
  await expect(page.getByTestId('kv-bytes-per-token')).toContainText(/\d bytes/);
  await expect(page.getByTestId('kv-sessions')).toContainText(/\d+ of 2k tokens, \d+ of 4k tokens/);
  await page.getByTestId('add-session').click();
  await check('one pane');
});
