// Getting a model as a person does: a normal load asks for no missing file, Hub failures say
// what went wrong (offline, CORS, unreachable, too slow) in seconds, and suggested Hub models.
import { existsSync, readFileSync } from 'node:fs';
import { expect, test, type Route } from '@playwright/test';
import { openPlayground as open } from './playground-page';
import { hfToGguf } from '../tools/models/hf-to-gguf';
import { SYNTH_SLIDING_WINDOW } from '../src/model/testing/synthetic-model-fixtures';
import { publishedModelParts } from '../src/model/testing/published-model-fixtures';
import { PUBLISHED_TOKENIZERS } from '../src/model/testing/published-tokenizer-fixtures';

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

/** Answers a huggingface.co resolve URL from the embedded model's files (ranges included), after a pause so progress shows. */
async function serveFromEmbedded(route: Route, name: string): Promise<void> {
  const path = `public/models/cohort-tiny/${name}`;
  if (!existsSync(path)) return route.fulfill({ status: 404, headers: { 'access-control-allow-origin': '*' }, body: 'not found' });
  return serveBytes(route, readFileSync(path));
}

/** A file download as the Hub answers it: whole or by range, after a short delay so progress shows. */
async function serveBytes(route: Route, body: Buffer | Uint8Array): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 800));
  const range = route.request().headers()['range']?.match(/bytes=(\d+)-(\d+)/);
  if (range) {
    const [start, end] = [Number(range[1]), Math.min(Number(range[2]), body.length - 1)];
    return route.fulfill({ status: 206, headers: { 'content-range': `bytes ${start}-${end}/${body.length}`, 'access-control-allow-origin': '*' }, body: Buffer.from(body.subarray(start, end + 1)) });
  }
  return route.fulfill({ status: 200, headers: { 'content-length': String(body.length), 'access-control-allow-origin': '*' }, body: Buffer.from(body) });
}

test('suggested Hub models: listed with quant and size, one click downloads into the cache with progress and serves', async ({ page }, testInfo) => {
  test.setTimeout(300_000);
  // The suggested repos answered from the embedded model's files: the real download, cache and
  // load paths, only the network is local (a GGUF for Qwen, the HF layout for SmolLM2).
  const seen: string[] = [];
  await page.route('https://huggingface.co/**', async (route) => {
    const url = new URL(route.request().url());
    seen.push(url.pathname);
    const gguf = url.pathname === '/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q8_0.gguf';
    if (gguf) return serveFromEmbedded(route, 'cohort-tiny-q8_0.gguf');
    const hf = url.pathname.match(/^\/HuggingFaceTB\/SmolLM2-135M-Instruct\/resolve\/main\/([\w.-]+)$/)?.[1];
    if (hf) return serveFromEmbedded(route, hf);
    return route.fulfill({ status: 404, body: 'not found' });
  });
  await open(page);
  await page.getByTestId('source-tab-huggingface').click();
  const suggestions = page.getByTestId('suggested-model');
  await expect(suggestions).toHaveCount(6);
  await expect(suggestions.first()).toContainText('SmolLM2-135M-Instruct');
  await expect(suggestions.first()).toContainText(/bf16 safetensors · ≈\d+ MB/);
  const qwen = page.locator('[data-testid=suggested-model][data-id=qwen25-05b-q8_0]');
  await expect(qwen).toContainText(/GGUF q8_0 · ≈\d+ MB/);
  await expect(page.locator('[data-testid=suggested-model][data-id=llama32-1b-q4_0]')).toContainText('Q4_0');
  const shot = testInfo.outputPath('suggested models.png');
  await page.getByTestId('suggested-models').screenshot({ path: shot });
  await testInfo.attach('suggested models', { path: shot, contentType: 'image/png' });

  await test.step('Qwen2.5 q8_0: one click, progress, then it serves and sits in the cache', async () => {
    await qwen.getByTestId('suggested-load').click();
    await expect(qwen.getByTestId('suggested-progress')).toBeVisible();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'false');
    expect(seen).toContain('/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q8_0.gguf');
    await expect(page.getByTestId('model-cache').getByTestId('cache-entry').filter({ hasText: 'qwen2.5-0.5b-instruct-q8_0.gguf' })).toHaveCount(1);
    await expect(qwen).toHaveAttribute('data-cached', 'true');
    await expect(qwen.getByTestId('suggested-load')).toHaveText('Load');
  });

  await test.step('SmolLM2-135M: the HF layout downloads file by file and serves', async () => {
    const smol = page.locator('[data-testid=suggested-model][data-id=smollm2-135m]');
    await smol.getByTestId('suggested-load').click();
    await expect(smol.getByTestId('suggested-progress')).toBeVisible();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'false');
    await expect(page.getByTestId('model-error')).toHaveCount(0);
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
    await expect(smol).toHaveAttribute('data-cached', 'true');
    await page.getByTestId('add-session').click();
    const pane = page.getByTestId('session-pane').first();
    await pane.getByTestId('session-input').fill('Hello from a suggested model.');
    await pane.getByTestId('session-input').press('Enter');
    await expect(pane).toHaveAttribute('data-state', 'done');
  });
});

test('a Gemma 3 suggestion loads, shows its local and global layers, and chats', async ({ page }) => {
  test.setTimeout(300_000);
  // A random-weight gemma3 GGUF of the test's own making, with the published Gemma 3 tokenizer at
  // its 262,144 rows, stands in for the Hub file: the real download, cache, GGUF gemma3 load
  // (tokens beginning with U+FEFF included) and GPU serving paths (window 16 on layer 0, layer 1 global).
  const gguf = hfToGguf(publishedModelParts(PUBLISHED_TOKENIZERS[0], 'gemma3', 2), 'q8_0');
  await page.route('https://huggingface.co/**', async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/unsloth/gemma-3-270m-it-GGUF/resolve/main/gemma-3-270m-it-Q8_0.gguf') return serveBytes(route, gguf);
    return route.fulfill({ status: 404, body: 'not found' });
  });
  await open(page);
  await page.getByTestId('source-tab-huggingface').click();
  const gemma = page.locator('[data-testid=suggested-model][data-id=gemma3-270m-q8_0]');
  await expect(gemma).toContainText(/GGUF Q8_0 · ≈\d+ MB/);
  await gemma.getByTestId('suggested-load').click();
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-loading', 'false');
  await expect(page.getByTestId('model-error')).toHaveCount(0);
  await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('model-info')).toContainText('gemma3');
  await expect(page.getByTestId('attention-layers')).toHaveText(`local (window ${SYNTH_SLIDING_WINDOW}): layers 0; global: 1`);
  // llama.cpp's end tokens for Gemma 3: <eos>, <end_of_turn> and </s>
  await expect(page.getByTestId('end-tokens')).toHaveText('1 <eos>, 106 <end_of_turn>, 212 </s>');
  // the local layer's K/V in a pool of its own, whose blocks go back past the window
  await expect(page.getByTestId('kv-window-pool')).toContainText('blocks for the local layers');
  await page.getByTestId('add-session').click();
  const pane = page.getByTestId('session-pane').first();
  // a prompt longer than the window, so the local layer's keys slide during prefill and decode
  await pane.getByTestId('session-input').fill('Hello from a gemma model, with a prompt longer than its window.');
  await pane.getByTestId('session-input').press('Enter');
  await expect(pane).toHaveAttribute('data-state', 'done');
  await expect(pane.getByTestId('session-error')).toHaveCount(0);
});
