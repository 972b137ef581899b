// `npm run bench:baseline -- --base=REV [--rounds=N] [--bench=kernels|headless] [grid options]`: a
// benchmark on this tree and on an earlier commit (a git worktree outside the repository), interleaved,
// then new/old ratios. COHORT_BENCH_* variables and grid options pass through to both. Asserts nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../src/gpu/testing/node-gpu';
import { compareGridReports, compareKernelReports, renderBaselineMarkdown, renderGridBaselineMarkdown } from './baseline-report';
import type { KernelBenchReport } from './kernel-report';
import type { BenchReport } from './report';
import { baseWorktree, git } from './worktree';

const OWN_OPTIONS = ['base', 'rounds', 'bench'];
const argv = process.argv.slice(2);
const args = new Map(argv.map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const baseRev = args.get('base');
const bench = args.get('bench') ?? 'kernels';
if (!baseRev || (bench !== 'kernels' && bench !== 'headless')) {
  console.error('Usage: npm run bench:baseline -- --base=REV [--rounds=N] [--bench=kernels|headless] [grid options for headless]');
  process.exit(2);
}
const rounds = Number(args.get('rounds') ?? 3);
/** Grid options (--sessions=..., --workloads=...) go to both sides' bench:headless. */
const gridArgs = argv.filter((a) => !OWN_OPTIONS.includes(a.replace(/^--/, '').split('=')[0]!));

/** One side's run of the chosen benchmark, reading back the JSON report it wrote to outDir. */
function runBench<T>(cwd: string, outDir: string): T {
  mkdirSync(outDir, { recursive: true });
  const script = bench === 'kernels' ? ['bench/kernels.node.ts'] : ['bench/headless.node.ts', ...gridArgs];
  const r = spawnSync(join(cwd, 'node_modules', '.bin', 'tsx'), script, { cwd, stdio: 'inherit', env: { ...process.env, COHORT_BENCH_RESULTS_DIR: outDir } });
  if (r.status !== 0) throw new Error(`the ${bench} benchmark failed in ${cwd}`);
  const file = readdirSync(outDir).find((f) => f.endsWith('.json'));
  if (!file) throw new Error(`no report in ${outDir}`);
  return JSON.parse(readFileSync(join(outDir, file), 'utf8')) as T;
}

const baseSha = git('rev-parse', baseRev);
const newSha = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const baseDir = baseWorktree(baseSha);
const scratch = mkdtempSync(join(tmpdir(), 'cohort-baseline-runs-'));
const base: Array<KernelBenchReport | BenchReport> = [];
const next: Array<KernelBenchReport | BenchReport> = [];
for (let round = 0; round < rounds; round++) {
  // Alternate which side goes first so drift (thermal, other load) hits both alike.
  const order = round % 2 === 0 ? (['base', 'new'] as const) : (['new', 'base'] as const);
  for (const side of order) {
    console.log(`\nround ${round + 1}/${rounds}: ${side}`);
    const report = runBench<KernelBenchReport | BenchReport>(side === 'base' ? baseDir : repoPath('.'), join(scratch, `${round}-${side}`));
    (side === 'base' ? base : next).push(report);
  }
}
const first = next[0]!;
const meta = {
  date: first.date,
  machine: first.machine,
  baseCommit: baseSha.slice(0, 7),
  newCommit: newSha.slice(0, 7) + (dirty ? '+changes' : ''),
  ...(process.env.COHORT_BENCH_NOTE ? { note: process.env.COHORT_BENCH_NOTE } : {}),
};
const [json, markdown] =
  bench === 'kernels'
    ? ((r) => [r, renderBaselineMarkdown(r)] as const)(compareKernelReports(base as KernelBenchReport[], next as KernelBenchReport[], meta))
    : ((r) => [r, renderGridBaselineMarkdown(r)] as const)(compareGridReports(base as BenchReport[], next as BenchReport[], meta));
const out = repoPath(`bench/results/${first.date}-${first.machine}-${bench}-vs-${meta.baseCommit}`);
writeFileSync(`${out}.json`, JSON.stringify(json, null, 2) + '\n');
writeFileSync(`${out}.md`, markdown);
console.log(markdown);
console.log(`wrote ${out}.{json,md}`);
