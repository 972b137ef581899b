// Playwright: system Chromium (CHROME_PATH or /usr/bin/chromium) with WebGPU on, against the
// test build (the app plus testing/harness.html) served by `vite preview --mode test` from dist-test/.
import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './testing/chromium-fixtures';

const port = Number(process.env.COHORT_PORT ?? 4173);
const launchOptions = chromiumLaunchOptions();
if (!existsSync('dist-test/testing/harness.html')) {
  throw new Error('dist-test/ is missing: run `npm run build:test` first (npm test does it for you).');
}

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results/playwright',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  // SwiftShader compiles and runs kernels on the CPU: slow, so timeouts are generous.
  timeout: 300_000,
  expect: { timeout: 120_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    headless: true,
    launchOptions,
    trace: 'retain-on-failure',
  },
  webServer: {
    command: `npx vite preview --mode test --host 127.0.0.1 --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}`,
    reuseExistingServer: false,
    timeout: 120_000,
  },
});
