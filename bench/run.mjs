// `npm run bench [-- options]`: builds the app, then runs the batching benchmark in Chromium via
// bench/playwright.bench.config.ts. Options become COHORT_BENCH_* variables; nothing is asserted.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

const usage = `Usage: npm run bench -- [--quick] [--sessions=1,2,4,8,16] [--repeats=3] [--workloads=chat,niah]
                       [--chat-tokens=64] [--join-decoders=4] [--machine=NAME] [--no-build]
  --quick        1, 2 and 4 sessions and 32 new tokens per chat turn (still 3 repeats)
  --machine      name used in bench/results/<date>-<machine>.* (default: the GPU adapter's vendor and architecture)
  --no-build     reuse dist/ as it is
Environment: COHORT_GPU=native runs on the real GPU (default SwiftShader); COHORT_MODEL_DIR or
COHORT_MODEL_URL benchmarks another model than the embedded one; COHORT_HARNESS_LOG=1 logs every step.`;

const optionEnv = {
  sessions: 'COHORT_BENCH_SESSIONS',
  repeats: 'COHORT_BENCH_REPEATS',
  workloads: 'COHORT_BENCH_WORKLOADS',
  'chat-tokens': 'COHORT_BENCH_CHAT_TOKENS',
  'join-decoders': 'COHORT_BENCH_JOIN_DECODERS',
  machine: 'COHORT_BENCH_MACHINE',
};

const env = { ...process.env };
let build = true;
for (const arg of process.argv.slice(2)) {
  const [flag, value] = arg.replace(/^--/, '').split('=');
  if (arg === '--help' || arg === '-h') {
    console.log(usage);
    process.exit(0);
  } else if (arg === '--quick') env.COHORT_BENCH_QUICK = '1';
  else if (arg === '--no-build') build = false;
  else if (optionEnv[flag] && value) env[optionEnv[flag]] = value;
  else {
    console.error(`Unknown option ${arg}\n${usage}`);
    process.exit(2);
  }
}

function run(command, args) {
  console.log(`$ ${[path.basename(command), ...args].join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env });
  return result.status ?? 1;
}

if (build && run(bin('vite'), ['build']) !== 0) process.exit(1);
process.exit(run(bin('playwright'), ['test', '--config', 'bench/playwright.bench.config.ts']));
