// `npm run bench:baseline -- --base=REV [--rounds=N]`: the per-kernel benchmark on this tree and
// on an earlier commit (a git worktree outside the repository), interleaved, then new/old ratios.
// COHORT_BENCH_MODELS / _BATCHES / _REPEATS / _NOTE pass through to both sides. Asserts nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../src/gpu/testing/node-gpu';
import { compareKernelReports, renderBaselineMarkdown } from './baseline-report';
import type { KernelBenchReport } from './kernel-report';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const baseRev = args.get('base');
if (!baseRev) {
  console.error('Usage: npm run bench:baseline -- --base=REV [--rounds=N]');
  process.exit(2);
}
const rounds = Number(args.get('rounds') ?? 3);

function git(...gitArgs: string[]): string {
  const r = spawnSync('git', gitArgs, { cwd: repoPath('.'), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${gitArgs.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The earlier commit checked out once under the temp folder, with its own locked dependencies. */
function baseWorktree(sha: string): string {
  const dir = join(tmpdir(), `cohort-baseline-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'package.json'))) git('worktree', 'add', '--force', '--detach', dir, sha);
  if (!existsSync(join(dir, 'node_modules', '.bin', 'tsx'))) {
    const r = spawnSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm ci failed in ${dir}`);
  }
  return dir;
}

function runKernels(cwd: string, outDir: string): KernelBenchReport {
  mkdirSync(outDir, { recursive: true });
  const r = spawnSync(join(cwd, 'node_modules', '.bin', 'tsx'), ['bench/kernels.node.ts'], { cwd, stdio: 'inherit', env: { ...process.env, COHORT_BENCH_RESULTS_DIR: outDir } });
  if (r.status !== 0) throw new Error(`the kernel benchmark failed in ${cwd}`);
  const file = readdirSync(outDir).find((f) => f.endsWith('-kernels.json'));
  if (!file) throw new Error(`no report in ${outDir}`);
  return JSON.parse(readFileSync(join(outDir, file), 'utf8')) as KernelBenchReport;
}

const baseSha = git('rev-parse', baseRev);
const newSha = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const baseDir = baseWorktree(baseSha);
const scratch = mkdtempSync(join(tmpdir(), 'cohort-baseline-runs-'));
const base: KernelBenchReport[] = [];
const next: KernelBenchReport[] = [];
for (let round = 0; round < rounds; round++) {
  // Alternate which side goes first so drift (thermal, other load) hits both alike.
  const order = round % 2 === 0 ? (['base', 'new'] as const) : (['new', 'base'] as const);
  for (const side of order) {
    console.log(`\nround ${round + 1}/${rounds}: ${side}`);
    const report = runKernels(side === 'base' ? baseDir : repoPath('.'), join(scratch, `${round}-${side}`));
    (side === 'base' ? base : next).push(report);
  }
}
const first = next[0]!;
const report = compareKernelReports(base, next, {
  date: first.date,
  machine: first.machine,
  baseCommit: baseSha.slice(0, 7),
  newCommit: newSha.slice(0, 7) + (dirty ? '+changes' : ''),
  ...(process.env.COHORT_BENCH_NOTE ? { note: process.env.COHORT_BENCH_NOTE } : {}),
});
const out = repoPath(`bench/results/${first.date}-${first.machine}-kernels-vs-${report.baseCommit}`);
writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
writeFileSync(`${out}.md`, renderBaselineMarkdown(report));
console.log(renderBaselineMarkdown(report));
console.log(`wrote ${out}.{json,md}`);
