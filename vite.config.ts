// Vite build and dev/preview server for the Cohort page, the engine harness page and the worker.
// Test settings live in vitest.config.ts; browser tests in playwright.config.ts.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const port = Number(process.env.COHORT_PORT ?? 4173);

export default defineConfig({
  plugins: [react()],
  // Two pages and no client routing. The SPA fallback would answer a missing model file (e.g. the
  // optional model.safetensors.index.json) with index.html instead of a 404.
  appType: 'mpa',
  // The worker imports shaders with ?raw and uses top-level module syntax.
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    sourcemap: true,
    // harness.html: a bare page that exposes the engine worker to browser tests and the benchmark.
    rolldownOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        harness: fileURLToPath(new URL('harness.html', import.meta.url)),
      },
    },
  },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port, strictPort: true },
});
