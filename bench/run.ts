// `npm run bench [-- options]`: builds the app, then runs the batching benchmark in Chromium via
// bench/playwright.bench.config.ts. Options become COHORT_BENCH_* variables; nothing is asserted.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GRID_USAGE, parseOptions } from './options';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string): string => path.join(root, 'node_modules', '.bin', name);

const usage = `Usage: npm run bench -- [grid options] [--no-build]
       npm run bench -- --chart=REPORT.json [--no-build]
${GRID_USAGE}
  --chart=FILE         draws FILE's chart (.png beside it) for a report written by npm run bench:headless
  --no-build           reuse dist-test/ as it is
Environment: COHORT_GPU=native runs on the real GPU (default SwiftShader); COHORT_MODEL_DIR or
COHORT_MODEL_URL benchmarks another model than the embedded one; COHORT_HARNESS_LOG=1 logs every step.`;

function fail(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(usage);
  process.exit(0);
}
let parsed;
try {
  parsed = parseOptions(args);
} catch (error) {
  fail((error as Error).message);
}
const env: NodeJS.ProcessEnv = { ...process.env, ...parsed.env };
let build = true;
let grep = 'decode throughput';
for (const [name, value] of parsed.other) {
  if (name === 'no-build' && value === '') build = false;
  else if (name === 'chart' && value) {
    env.COHORT_BENCH_CHART = path.resolve(value);
    grep = 'chart of a saved report';
  } else fail(`Unknown option --${name}`);
}

function run(command: string, commandArgs: string[]): number {
  console.log(`$ ${[path.basename(command), ...commandArgs].join(' ')}`);
  return spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit', env }).status ?? 1;
}

if (build && run(bin('vite'), ['build', '--mode', 'test']) !== 0) process.exit(1);
process.exit(run(bin('playwright'), ['test', '--config', 'bench/playwright.bench.config.ts', '--grep', grep]));
