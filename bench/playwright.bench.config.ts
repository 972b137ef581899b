// Playwright settings for `npm run bench`: the same Chromium launch (SwiftShader, or the real GPU
// with COHORT_GPU=native) and preview server as playwright.config.ts, but bench specs and no limits.
import { fileURLToPath } from 'node:url';
import { defineConfig } from '@playwright/test';
import base from '../playwright.config';

const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  ...base,
  testDir: '.',
  testMatch: '*.bench.ts',
  outputDir: '../test-results/bench',
  // One test runs the whole grid; bench/run.ts sizes it (the full grid on SwiftShader: ~40 min).
  timeout: 3 * 60 * 60_000,
  reporter: [['list']],
  use: { ...base.use, trace: 'off' },
  // The preview server must serve the repository's dist-test/, whichever folder holds this config.
  webServer: base.webServer && !Array.isArray(base.webServer) ? { ...base.webServer, cwd: root } : base.webServer,
});
