// Vite library build of src/lib (`npm run build:lib`): ESM into dist-lib/ with the engine worker,
// its shaders and comlink bundled; declarations come from tsconfig.lib.json. Not the page's build.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  // The library ships no model weights: pages serve a model or load one by URL or repo id.
  publicDir: false,
  // Relative, so the worker is found beside cohort.js (new URL(..., import.meta.url)) wherever it is served.
  base: './',
  // The worker imports shaders with ?raw and uses top-level module syntax.
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    outDir: 'dist-lib',
    sourcemap: true,
    lib: { entry: fileURLToPath(new URL('src/lib/index.ts', import.meta.url)), formats: ['es'], fileName: 'cohort' },
  },
});
