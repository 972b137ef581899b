// Turns as a person drives them: Cancel says "cancelling…" at once, before the engine's next step
// boundary ends the turn; sampling settings change between turns and apply to the next one.
import { expect, test } from '@playwright/test';
import { openPlayground as open, send, expectDone } from './playground-page';
import { niahLinesFor, niahPrompt } from '../src/protocol/niah';

test('cancel shows "cancelling…" at once, then the turn ends cancelled', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  await page.getByTestId('add-session').click();
  const pane = page.getByTestId('session-pane').first();
  await send(pane, niahPrompt(niahLinesFor(1800), 3, 'OAK-4321'));
  await expect(pane).toHaveAttribute('data-state', /^(prefill|decode)$/);
  // Every text the state badge shows from the click on, however briefly.
  await pane.getByTestId('session-state').evaluate((badge) => {
    const seen: string[] = [];
    (window as unknown as { __badgeTexts: string[] }).__badgeTexts = seen;
    new MutationObserver(() => seen.push(badge.textContent ?? '')).observe(badge, { subtree: true, childList: true, characterData: true });
  });
  await pane.getByTestId('session-cancel').click();
  // The first thing the badge shows after the click is "cancelling…", not the step still running.
  await expect.poll(() => page.evaluate(() => (window as unknown as { __badgeTexts: string[] }).__badgeTexts[0]), { timeout: 2_000 }).toBe('cancelling…');
  await expect(pane).toHaveAttribute('data-state', 'cancelled');
  await expect(pane.getByTestId('session-state')).toHaveText('cancelled');
  await expect(pane.getByTestId('session-send')).toBeVisible();
});

test('settings edited between turns apply to the next turn, with the transcript carried over', async ({ page }) => {
  test.setTimeout(300_000);
  await open(page);
  await page.getByTestId('add-session').click();
  const pane = page.getByTestId('session-pane').first();
  await send(pane, 'Hello');
  await expectDone(pane);
  const firstEngineId = await pane.getAttribute('data-engine-session-id');
  expect(firstEngineId).toBeTruthy();

  await pane.getByTestId('session-settings-toggle').click();
  await expect(pane.getByTestId('setting-maxNewTokens')).toBeEnabled();
  await pane.getByTestId('setting-maxNewTokens').fill('3');
  await pane.getByTestId('setting-temperature').fill('0');
  await pane.getByTestId('session-settings-toggle').click();
  await expect(pane.getByTestId('session-settings-summary')).toContainText('greedy · max 3');

  await send(pane, 'Again, please');
  await expectDone(pane);
  expect(Number(await pane.getAttribute('data-num-tokens'))).toBeLessThanOrEqual(3);
  // A new engine session took the new settings; the first turn is still in the transcript.
  const secondEngineId = await pane.getAttribute('data-engine-session-id');
  expect(secondEngineId).toBeTruthy();
  expect(secondEngineId).not.toBe(firstEngineId);
  const texts = await pane.locator('.msg .msg-text').allTextContents();
  expect(texts.length).toBe(4);
  expect(texts[0]).toBe('Hello');
  expect(texts[2]).toBe('Again, please');

  // While a turn runs the settings are locked, and say why.
  await send(pane, niahPrompt(niahLinesFor(1800), 3, 'OAK-4321'));
  await pane.getByTestId('session-settings-toggle').click();
  await expect(pane.getByTestId('setting-maxNewTokens')).toBeDisabled();
  await pane.getByTestId('session-cancel').click();
  await expect(pane).toHaveAttribute('data-state', 'cancelled');
  await expect(pane.getByTestId('setting-maxNewTokens')).toBeEnabled();
});
