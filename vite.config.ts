// Vite build and dev/preview server for the Cohort page and its worker; `--mode test` adds the
// engine harness page (testing/) into dist-test/ for browser tests. Vitest settings: vitest.config.ts.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const port = Number(process.env.COHORT_PORT ?? 4173);

/**
 * What the built pages and the worker may do: scripts and workers only from this origin, no
 * eval, no plugins, no frames; model downloads from this origin or any https host (the worker
 * checks the URL the person typed again); a server backend at any http(s) address, since
 * llama-server and vLLM serve plain http on localhost or the LAN (an https page still gets only
 * localhost over http: the browser blocks the rest as mixed content). Inline styles stay allowed.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // WebAssembly compiles (XGrammar's, for response_format) need 'wasm-unsafe-eval'; JS eval stays off
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self' https: http:",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The policy as a <meta> in built pages (the dev server's inline React refresh would break it). */
function contentSecurityPolicy(): Plugin {
  return {
    name: 'cohort-csp',
    apply: 'build',
    transformIndexHtml: () => [{ tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY }, injectTo: 'head-prepend' }],
  };
}

/** The harness page ships only in the test build (`vite build --mode test`, served from dist-test/). */
const TEST_MODE = 'test';

export default defineConfig(({ mode }) => ({
  plugins: [react(), contentSecurityPolicy()],
  // Two pages and no client routing. The SPA fallback would answer a missing model file (e.g. the
  // optional model.safetensors.index.json) with index.html instead of a 404.
  appType: 'mpa',
  // The worker imports shaders with ?raw and uses top-level module syntax.
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    sourcemap: true,
    outDir: mode === TEST_MODE ? 'dist-test' : 'dist',
    // testing/harness.html: a bare page that exposes the engine worker to browser tests and the benchmark.
    rolldownOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        ...(mode === TEST_MODE
          ? {
              harness: fileURLToPath(new URL('testing/harness.html', import.meta.url)),
              // the library's test page and the examples/ page its spec opens
              library: fileURLToPath(new URL('testing/library.html', import.meta.url)),
              'example-concurrent': fileURLToPath(new URL('examples/concurrent.html', import.meta.url)),
            }
          : {}),
      },
    },
  },
  server: { host: '127.0.0.1', port: 5173 },
  // As a header too, so the worker (whose policy comes from its own response) is bound by it.
  preview: { host: '127.0.0.1', port, strictPort: true, headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY } },
}));
