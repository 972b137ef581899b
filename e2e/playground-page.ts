// What the playground specs do to the page as a person would: open it on the embedded model, send
// a message in a pane, wait for its turn to end well. Helpers only, no assertions of a spec's own.
import { expect, type Locator, type Page } from '@playwright/test';

/** Opens the playground at this size and waits for the embedded model (or says why it failed). */
export async function openPlayground(page: Page, width = 1440, height = 900): Promise<void> {
  await page.setViewportSize({ width, height });
  await page.goto('/');
  await expect(page.locator('[data-testid=model-info][data-state=ready], [data-testid=model-error]').first()).toBeAttached();
  const error = page.getByTestId('model-error');
  if (await error.count()) throw new Error(`the default model did not load: ${await error.textContent()}`);
}

export async function send(pane: Locator, text: string): Promise<void> {
  await expect(pane.getByTestId('session-send')).toBeVisible();
  await pane.getByTestId('session-input').fill(text);
  await pane.getByTestId('session-input').press('Enter');
}

/** Waits for the pane's turn to end and fails with its error text unless it ended done. */
export async function expectDone(pane: Locator): Promise<void> {
  await expect(pane).toHaveAttribute('data-state', /^(done|error|cancelled)$/);
  expect(await pane.getAttribute('data-state'), (await pane.getByTestId('session-error').allTextContents()).join(' ')).toBe('done');
}
