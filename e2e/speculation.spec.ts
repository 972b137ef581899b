// Speculative decoding as a person meets it: the session setting (auto / off / max drafts) chosen
// in the settings form and shown in the pane's settings line, and the Compare card running the same
// prompts with speculation off, then on, to the end with both sides' rates and the ratio.
import { expect, test } from '@playwright/test';
import { openPlayground as open, send, expectDone } from './playground-page';

test('the speculation setting applies to the next turn, and the Compare card runs speculation off vs on', async ({ page }) => {
  test.setTimeout(600_000);
  await open(page);
  await page.getByTestId('add-session').click();
  const pane = page.getByTestId('session-pane').first();

  await test.step('max drafts in the settings form, shown in the settings line; the turn ends well', async () => {
    await pane.getByTestId('session-settings-toggle').click();
    await pane.getByTestId('setting-speculation').selectOption('fixed');
    await expect(pane.getByTestId('setting-maxDraftTokens')).toHaveValue('4');
    await pane.getByTestId('setting-maxDraftTokens').fill('6');
    await pane.getByTestId('session-settings-toggle').click();
    await expect(pane.getByTestId('session-settings-summary')).toContainText('≤ 6 drafts');
    await send(pane, 'Hello');
    await expectDone(pane);
    await pane.getByTestId('session-settings-toggle').click();
    await pane.getByTestId('setting-speculation').selectOption('off');
    await expect(pane.getByTestId('setting-maxDraftTokens')).toHaveCount(0);
    await pane.getByTestId('session-settings-toggle').click();
    await expect(pane.getByTestId('session-settings-summary')).toContainText('no drafts');
  });

  await test.step('Compare: speculation off vs on shows both rates and the ratio', async () => {
    const card = page.getByTestId('compare');
    await card.getByTestId('compare-kind').selectOption('speculation');
    await expect(card.locator('h3')).toHaveText('Speculation off vs on');
    await card.getByTestId('compare-modes').click();
    await expect(card).toHaveAttribute('data-status', 'done', { timeout: 480_000 });
    await expect(card).toHaveAttribute('data-kind', 'speculation');
    await expect(card.getByTestId('compare-speculation-off')).toContainText('tok/s');
    await expect(card.getByTestId('compare-speculation-on')).toContainText('tok/s');
    await expect(card.getByTestId('compare-acceptance')).toBeVisible();
    expect(Number(await card.getByTestId('compare-ratio').getAttribute('data-ratio'))).toBeGreaterThan(0);
  });
});
