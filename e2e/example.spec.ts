// examples/concurrent.html in the browser: the plain page fires 8 streaming completions at once and
// prints each answer (its own secret code) with its usage. The page is the example; this only reads it.
import { expect, test } from '@playwright/test';

const CODES = ['ALPHA-1234', 'BETA-2345', 'GAMMA-3456', 'DELTA-4567', 'PINE-5678', 'MAPLE-6789', 'OAK-7890', 'BIRCH-8901'];

test('the example page streams 8 concurrent completions and prints their usage', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto('/examples/concurrent.html');
  await expect(page.locator('body')).toHaveAttribute('data-done', 'true', { timeout: 240_000 });
  await expect(page.locator('#status')).toContainText('all 8 done');
  // createEngine's default picks the shared worker where WebGPU works in one (it does in this Chromium)
  await expect(page.locator('#engine')).toContainText(/loaded \((shared|dedicated) worker\)/);
  console.log(`example page: ${await page.locator('#engine').textContent()}`);
  for (const [i, code] of CODES.entries()) {
    const block = page.getByTestId(`request-${i}`);
    await expect(block.locator('pre')).toContainText(code);
    await expect(block.locator('p')).toContainText(/\d+ prompt \+ \d+ completion tokens .* mean cohort/);
  }
  // the requests rode together: some request's mean cohort size is above 1. The page keeps the
  // library's step-time budget (it has no test hooks), which cannot part them: a step's first prompt
  // chunk always gets a token (MIN_PREFILL_TOKENS), so a request still prefilling rides beside one decoding
  const usage = await page.locator('section p').allTextContents();
  expect(Math.max(...usage.map((u) => Number(/mean cohort ([\d.]+)/.exec(u)![1])))).toBeGreaterThan(1);
  expect(errors).toEqual([]);
});
