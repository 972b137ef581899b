// Vite build and dev/preview server for the Cohort page and its engine worker.
// Test settings live in vitest.config.ts; browser tests in playwright.config.ts.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const port = Number(process.env.COHORT_PORT ?? 4173);

export default defineConfig({
  plugins: [react()],
  // The worker imports shaders with ?raw and uses top-level module syntax.
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  server: { host: '127.0.0.1', port: 5173 },
  preview: { host: '127.0.0.1', port, strictPort: true },
});
