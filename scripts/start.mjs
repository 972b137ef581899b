// `npm start`: installs dependencies on a fresh clone, builds the app, and serves the build on
// localhost, printing its URL. For development with hot reload use `npm run dev` instead.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function run(command, args) {
  console.log(`$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`${command} ${args.join(' ')} failed`);
    process.exit(result.status ?? 1);
  }
}

if (!existsSync(path.join(root, 'node_modules', '.bin', 'vite'))) run('npm', ['ci']);
run(path.join(root, 'node_modules', '.bin', 'vite'), ['build']);

// Imported only now: on a fresh clone vite exists only after `npm ci`.
const { preview } = await import('vite');
const port = Number(process.env.COHORT_PORT ?? 4173);
const server = await preview({ root, preview: { host: '127.0.0.1', port, strictPort: false, open: false } });
const url = server.resolvedUrls?.local[0] ?? `http://127.0.0.1:${port}/`;
console.log(`\nCohort is running at ${url}\nOpen it in Chrome or Edge 113+ (see README.md for WebGPU on Linux). Ctrl+C stops it.`);
