// Builds llama.cpp's `llama-server` (CPU only, no curl) from the source node-llama-cpp ships and
// caches the binary outside the repository; it is not a server manager (tests start their own).
// Usage: node scripts/llama-server.mjs [--print]   (builds when missing, prints the binary's path)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const llamaDir = path.join(root, 'node_modules', 'node-llama-cpp', 'llama');
const bundle = path.join(llamaDir, 'gitRelease.bundle');

/** The llama.cpp release tag node-llama-cpp pins (its bundle holds exactly that source). */
export function llamaCppTag() {
  return JSON.parse(readFileSync(path.join(llamaDir, 'llama.cpp.info.json'), 'utf8')).tag;
}

/** Where the binary is cached: $COHORT_LLAMA_SERVER_CACHE or ~/.cache/cohort, keyed by tag and CPU arch. */
export function llamaServerCacheDir() {
  const base = process.env.COHORT_LLAMA_SERVER_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'cohort');
  return path.join(base, `llama-server-${llamaCppTag()}-${process.arch}`);
}

/** The cached binary's path; `$COHORT_LLAMA_SERVER` overrides it with a server built elsewhere. */
export function llamaServerPath() {
  return process.env.COHORT_LLAMA_SERVER || path.join(llamaServerCacheDir(), 'llama-server');
}

function run(command, args, cwd) {
  console.log(`$ ${[command, ...args].join(' ')}`);
  const result = spawnSync(command, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${command} ${args[0]} failed (exit ${result.status ?? result.signal})`);
}

/** Returns the binary's path, building it first when it is missing (tens of minutes on 2 cores). */
export function ensureLlamaServer() {
  const binary = llamaServerPath();
  if (existsSync(binary)) return binary;
  if (process.env.COHORT_LLAMA_SERVER) throw new Error(`COHORT_LLAMA_SERVER=${binary} does not exist`);
  if (!existsSync(bundle)) throw new Error(`llama.cpp source bundle missing at ${bundle}: run npm ci first`);
  const cacheDir = llamaServerCacheDir();
  const workDir = path.join(cacheDir, 'src');
  const startedMs = Date.now();
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  console.log(`Building llama-server ${llamaCppTag()} into ${cacheDir} (first time only).`);
  run('git', ['clone', '--quiet', bundle, workDir], cacheDir);
  const flags = ['-DCMAKE_BUILD_TYPE=Release', '-DLLAMA_CURL=OFF', '-DGGML_NATIVE=ON', '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_EXAMPLES=OFF', '-DBUILD_SHARED_LIBS=OFF'];
  run('cmake', ['-S', workDir, '-B', path.join(workDir, 'build'), ...flags], cacheDir);
  run('cmake', ['--build', path.join(workDir, 'build'), '--target', 'llama-server', '-j', String(os.availableParallelism())], cacheDir);
  // Move into place last, so an interrupted build never leaves a binary that looks finished.
  renameSync(path.join(workDir, 'build', 'bin', 'llama-server'), binary);
  const elapsedMin = ((Date.now() - startedMs) / 60_000).toFixed(1);
  writeFileSync(path.join(cacheDir, 'build.json'), JSON.stringify({ tag: llamaCppTag(), elapsedMin, cpus: os.availableParallelism(), builtAt: new Date().toISOString() }, null, 2));
  rmSync(workDir, { recursive: true, force: true });
  console.log(`llama-server built in ${elapsedMin} min: ${binary}`);
  return binary;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(ensureLlamaServer());
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
