// Getting a model as a person does: a normal load asks for no missing file, Hub failures say
// what went wrong (offline, CORS, unreachable, too slow) in seconds, and suggested Hub models.
import { expect, test, type Page } from '@playwright/test';

async function open(page: Page): Promise<void> {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/');
  await expect(page.locator('[data-testid=model-info][data-state=ready], [data-testid=model-error]').first()).toBeAttached();
  const error = page.getByTestId('model-error');
  if (await error.count()) throw new Error(`the default model did not load: ${await error.textContent()}`);
}

test('a normal load of the embedded model requests no file that is not there', async ({ page, context }) => {
  test.setTimeout(300_000);
  const missing: string[] = [];
  const seen: string[] = [];
  // The context sees the engine worker's requests as well as the page's.
  context.on('response', (response) => {
    seen.push(response.url());
    if (response.status() >= 400) missing.push(`${response.status()} ${response.url()}`);
  });
  await open(page);
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
  expect(seen.some((url) => url.endsWith('/models/cohort-tiny/model.safetensors')), 'the worker\'s requests are seen').toBe(true);
  expect(missing).toEqual([]);
});

test('listing a Hub repo that fails says why, within seconds: unreachable, CORS refused, offline, too slow', async ({ page, context }) => {
  test.setTimeout(300_000);
  let mode: 'unreachable' | 'cors' | 'silent' = 'unreachable';
  await page.route('https://huggingface.co/**', async (route) => {
    if (mode === 'unreachable') return route.abort('namenotresolved');
    // An answer that allows another origin only: the browser refuses it to the page.
    if (mode === 'cors') return route.fulfill({ status: 200, headers: { 'access-control-allow-origin': 'https://elsewhere.example' }, json: { siblings: [] } });
    // silent: never answers
  });
  await open(page);
  await page.getByTestId('source-tab-huggingface').click();
  await page.getByTestId('hf-repo').fill('someone/some-model');
  const listFiles = page.getByRole('button', { name: 'List files' });
  const note = page.getByTestId('hf-list-note');

  for (const [kind, text] of [
    ['unreachable', 'could not be reached'],
    ['cors', 'does not allow this page to read it (CORS)'],
  ] as const) {
    mode = kind;
    const started = Date.now();
    await listFiles.click();
    await expect(note).toHaveAttribute('data-failure', kind, { timeout: 10_000 });
    await expect(note).toContainText(text);
    expect(Date.now() - started).toBeLessThan(10_000);
  }

  await context.setOffline(true);
  await listFiles.click();
  await expect(note).toHaveAttribute('data-failure', 'offline', { timeout: 2_000 });
  await expect(note).toContainText('You are offline');
  await context.setOffline(false);

  mode = 'silent';
  const started = Date.now();
  await listFiles.click();
  await expect(note).toHaveAttribute('data-failure', 'timeout', { timeout: 25_000 });
  await expect(note).toContainText('did not answer within 15 s');
  expect(Date.now() - started).toBeLessThan(25_000);
});
