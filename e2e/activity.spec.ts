// The activity panel over a recent window, as a person uses it: closed sessions leave the
// timeline, labels stay readable with many rows, a window size and "clear", gaps and hover values.
import { expect, test, type Locator } from '@playwright/test';
import { openPlayground as open, send, expectDone } from './playground-page';

async function setMaxTokens(pane: Locator, n: number): Promise<void> {
  await pane.getByTestId('session-settings-toggle').click();
  await pane.getByTestId('setting-maxNewTokens').fill(String(n));
  await pane.getByTestId('session-settings-toggle').click();
}

const num = async (el: Locator, name: string) => Number(await el.getAttribute(name));

test('timeline and charts: a window of recent steps, closed sessions dropped, clear, idle gaps, hover values, readable rows', async ({ page }, testInfo) => {
  test.setTimeout(900_000);
  await open(page);
  const timeline = page.getByTestId('cohort-timeline');
  const throughput = page.getByTestId('throughput-chart');
  const kv = page.getByTestId('kv-chart');

  await page.getByTestId('add-n-count').fill('2');
  await page.getByTestId('add-n-sessions').click();
  const panes = page.getByTestId('session-pane');
  const [a, b] = [panes.nth(0), panes.nth(1)];
  await setMaxTokens(a, 150);
  await setMaxTokens(b, 150);

  await test.step('two sessions side by side are two rows; hovering a chart shows its values', async () => {
    await send(a, 'Hello');
    await send(b, 'Hello there');
    await expectDone(a);
    await expectDone(b);
    await expect.poll(() => num(timeline, 'data-rows')).toBe(2);
    const box = (await throughput.locator('.u-over').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    // The legend's "all" entry (after the x entry) shows the tok/s at the cursor.
    await expect(throughput.locator('.u-legend .u-series').nth(1).locator('.u-value')).toHaveText(/^\d+(\.\d)?$/);
    await page.mouse.move(0, 0);
  });

  await test.step('a pause longer than a second breaks both charts\' lines', async () => {
    await page.waitForTimeout(1500);
    await send(a, 'Again');
    await expectDone(a);
    await expect.poll(() => num(throughput, 'data-breaks')).toBeGreaterThanOrEqual(1);
    expect(await num(kv, 'data-breaks')).toBeGreaterThanOrEqual(1);
  });

  await test.step('the window keeps the last 200 steps when asked', async () => {
    // cohort-tiny often stops early: more turns until there are more than 200 steps.
    for (let turn = 0; turn < 60 && (await num(throughput, 'data-steps')) <= 200; turn++) {
      await send(a, `Turn ${turn}`);
      await send(b, `Turn ${turn} again`);
      await expectDone(a);
      await expectDone(b);
      await page.waitForTimeout(300); // the charts refresh four times a second
    }
    const before = await num(throughput, 'data-steps');
    expect(before).toBeGreaterThan(200);
    await page.getByTestId('activity-window').selectOption('200');
    await expect.poll(() => num(throughput, 'data-steps')).toBe(200);
    expect(await num(kv, 'data-steps')).toBe(200);
    await page.getByTestId('activity-window').selectOption('2000');
    await expect.poll(() => num(throughput, 'data-steps')).toBeGreaterThanOrEqual(before);
  });

  await test.step('a closed session leaves the timeline', async () => {
    await b.getByTestId('session-close').click();
    await expect(panes).toHaveCount(1);
    await expect.poll(() => num(timeline, 'data-rows')).toBe(1);
  });

  await test.step('clear empties the timeline and charts; new steps show again', async () => {
    await page.getByTestId('activity-clear').click();
    await expect.poll(() => num(timeline, 'data-steps')).toBe(0);
    expect(await num(throughput, 'data-steps')).toBe(0);
    await send(a, 'After the clear');
    await expectDone(a);
    await expect.poll(() => num(timeline, 'data-steps')).toBeGreaterThan(0);
    expect(await num(timeline, 'data-rows')).toBe(1);
  });

  await test.step('fourteen sessions: every row is at least 12 px with an 11 px label, the rows box scrolls', async () => {
    await page.getByTestId('add-n-count').fill('13');
    await page.getByTestId('add-n-sessions').click();
    await expect(panes).toHaveCount(14);
    for (let i = 0; i < 14; i++) await send(panes.nth(i), `Row ${i}`);
    await expect.poll(() => num(timeline, 'data-rows'), { timeout: 300_000 }).toBe(14);
    expect(await num(timeline, 'data-row-height')).toBeGreaterThanOrEqual(12);
    expect(await num(timeline, 'data-label-px')).toBe(11);
    const rowsBox = page.locator('.timeline-rows');
    expect(await rowsBox.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    const path = testInfo.outputPath('activity panel 14 rows.png');
    await page.getByTestId('cohort-panel').screenshot({ path });
    await testInfo.attach('activity panel, 14 rows', { path, contentType: 'image/png' });
  });
});

test('the NIAH card goes away once its panes are closed', async ({ page }) => {
  test.setTimeout(600_000);
  await open(page);
  await page.getByTestId('niah-count').fill('2');
  await page.getByTestId('niah-length').selectOption('600');
  await page.getByTestId('niah-preset').click();
  await expect(page.getByTestId('niah-recall')).not.toHaveAttribute('data-recall', '');
  await page.getByTestId('close-all').click();
  await expect(page.getByTestId('session-pane')).toHaveCount(0);
  await expect(page.getByTestId('niah-summary')).toHaveCount(0);
});
