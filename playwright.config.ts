// Playwright: system Chromium (CHROME_PATH or /usr/bin/chromium) with WebGPU on, against the
// test build (the app plus testing/harness.html) served by `vite preview --mode test` from dist-test/.
import { existsSync } from 'node:fs';
import { defineConfig } from '@playwright/test';

const port = Number(process.env.COHORT_PORT ?? 4173);
const chromePath = process.env.CHROME_PATH || '/usr/bin/chromium';
if (!existsSync(chromePath)) {
  throw new Error(
    `No Chromium at ${chromePath}. Install one (Debian/Ubuntu: sudo apt-get install -y chromium) ` +
      'or point CHROME_PATH at a Chrome/Chromium binary. Cohort never downloads browsers.',
  );
}
if (!existsSync('dist-test/testing/harness.html')) {
  throw new Error('dist-test/ is missing: run `npm run build:test` first (npm test does it for you).');
}

const commonFlags = ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
// SwiftShader is Chromium's CPU Vulkan: WebGPU without a GPU. COHORT_GPU=native uses the real GPU.
const swiftShaderFlags = ['--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader', '--disable-vulkan-surface'];
const gpuFlags = process.env.COHORT_GPU === 'native' ? ['--enable-features=Vulkan'] : swiftShaderFlags;

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
    launchOptions: { executablePath: chromePath, args: [...commonFlags, ...gpuFlags] },
    trace: 'retain-on-failure',
  },
  webServer: {
    command: `npx vite preview --mode test --host 127.0.0.1 --port ${port} --strictPort`,
    url: `http://127.0.0.1:${port}`,
    reuseExistingServer: false,
    timeout: 120_000,
  },
});
