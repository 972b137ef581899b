// Playwright side of harness.html: opens the page, loads a model into its engine worker and runs
// workloads through window.cohort. Shared by the recall spec and the benchmark; no assertions.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { GpuInfo, KvCacheOptions, ModelInfo, ModelSource, StepBudget } from '../src/protocol/api';
import type { RunRecord, RunRequest } from '../testing/harness/driver';

/** Same-origin path under which COHORT_MODEL_DIR's files are served to the page. */
const LOCAL_MODEL_PATH = '/__local-model__/';

/**
 * The model to test: COHORT_MODEL_DIR (a local HF folder, served to the page by Playwright),
 * else COHORT_MODEL_URL (an HF folder or .gguf URL, https or this origin), else the embedded one.
 */
export function modelSource(): ModelSource {
  if (process.env.COHORT_MODEL_DIR) return { kind: 'url', url: LOCAL_MODEL_PATH };
  const url = process.env.COHORT_MODEL_URL;
  return url ? { kind: 'url', url } : { kind: 'embedded' };
}

/**
 * Opens harness.html and waits until its engine worker is subscribed. COHORT_HARNESS_LOG=1 prints
 * one line per engine step (slow runs show their progress).
 */
export async function openHarness(page: Page): Promise<void> {
  page.on('pageerror', (err) => console.error(`[harness page] ${err.message}`));
  const logSteps = process.env.COHORT_HARNESS_LOG === '1';
  if (logSteps) page.on('console', (message) => console.log(`[harness] ${message.text()}`));
  const modelDir = process.env.COHORT_MODEL_DIR;
  if (modelDir) {
    // Routed on the context so the engine worker's fetches are answered too.
    await page.context().route(`**${LOCAL_MODEL_PATH}*`, (route) => {
      const name = path.basename(new URL(route.request().url()).pathname);
      const file = path.resolve(modelDir, name);
      return existsSync(file) ? route.fulfill({ path: file }) : route.fulfill({ status: 404, body: 'not found' });
    });
  }
  await page.goto(logSteps ? '/testing/harness.html?log' : '/testing/harness.html');
  await page.waitForFunction(() => document.body.dataset.ready === 'true', undefined, { timeout: 120_000 });
}

/** (Re)loads the model: a fresh engine, so an empty KV pool and prefix cache; `kv` as the library's load options. */
export function loadModel(page: Page, source: ModelSource = modelSource(), kv?: KvCacheOptions): Promise<ModelInfo> {
  return page.evaluate(({ s, k }) => window.cohort.api.loadModel(s, undefined, k), { s: source, k: kv });
}

/**
 * Turns the step-time budget off (null) or sets it; the host keeps it across loads. Checks of which
 * rows ride together run with it off: on, a step's prompt tokens follow the measured step cost, so
 * on a busy machine sessions can finish before later ones join.
 */
export function setStepBudget(page: Page, budget: StepBudget | null): Promise<void> {
  return page.evaluate((b) => window.cohort.api.setStepBudget(b), budget);
}

export function gpuInfo(page: Page): Promise<GpuInfo> {
  return page.evaluate(() => window.cohort.api.gpuInfo() as Promise<GpuInfo>);
}

export function runTurns(page: Page, request: RunRequest): Promise<RunRecord> {
  return page.evaluate((r) => window.cohort.run(r), request);
}
