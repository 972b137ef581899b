// `npm run bench:soak -- --minutes=10 [--seed=1] [--sample-seconds=30] [--no-build] [--no-playground] [--no-heap-snapshots]`:
// the soak (soak.ts) in headless Chromium on the test build; writes results/<date>-soak.{json,md}, exits 1 on a failed check.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../testing/chromium-fixtures';
import { repoPath } from '../src/gpu/testing/node-gpu';
import { CYCLE_MS, runSoak } from './soak';
import { diffHeapSnapshots } from './heap-snapshot';
import { checks, renderMarkdown } from './soak-report';
import { serveBuild } from './serve-build';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string | undefined]));
const minutes = Number(args.get('minutes') ?? 10);
const seed = Number(args.get('seed') ?? 1);
const sampleEveryMs = Number(args.get('sample-seconds') ?? 30) * 1000;
const port = Number(process.env.COHORT_PORT ?? 4174);
/**
 * Heap and GPU growth are measured from the first sample past this: one whole cycle of
 * disturbances by default, so every path (a frozen tab's rejoin, a reload, a reopened tab) has run
 * and been compiled once before growth counts; in runs shorter than two cycles, the first minute.
 */
const warmUpMs = Number(args.get('warm-up-seconds') ?? (minutes * 60_000 >= 2 * CYCLE_MS ? CYCLE_MS / 1000 + 30 : 60)) * 1000;
if (!(minutes > 0) || !(sampleEveryMs > 0)) {
  console.error('Usage: npm run bench:soak -- [--minutes=10] [--seed=1] [--sample-seconds=30] [--warm-up-seconds=210] [--no-build] [--no-playground] [--no-heap-snapshots]');
  process.exit(2);
}

function serve(): Promise<ChildProcess> {
  return serveBuild(repoPath('.'), port, { mode: 'test', readyPath: '/testing/library.html', skipBuild: args.has('no-build') });
}

/** The steady tab's and the worker's heaps at the start and end of the measured span: compared in the report, kept for bench/heap-diff.node.ts. */
const snapshots: Record<string, string> = {};
function writeSnapshot(target: 'page' | 'worker', phase: 'start' | 'end', json: string): void {
  const dir = repoPath('test-results/soak-heap');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${target}-${phase}.heapsnapshot`), json);
  console.log(`wrote test-results/soak-heap/${target}-${phase}.heapsnapshot`);
  snapshots[`${target}-${phase}`] = json;
}
const kept = (target: 'page' | 'worker') => {
  const [start, end] = [snapshots[`${target}-start`], snapshots[`${target}-end`]];
  return start && end ? diffHeapSnapshots(start, end) : undefined;
};

const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
const server = await serve();
const browser = await chromium.launch({ ...chromiumLaunchOptions(), headless: true });
try {
  const report = await runSoak(browser, {
    baseURL: `http://127.0.0.1:${port}`,
    durationMs: minutes * 60_000,
    seed,
    sampleEveryMs,
    heartbeat: { intervalMs: 250, timeoutMs: 3_000 },
    requestDeadlineMs: 120_000,
    clientsPerTab: 2,
    playground: !args.has('no-playground'),
    commit,
    log: (line) => console.log(line),
    ...(args.has('no-heap-snapshots') ? {} : { heapSnapshots: { afterMs: warmUpMs, write: writeSnapshot } }),
  });
  const [page, worker] = [kept('page'), kept('worker')];
  if (page || worker) report.heapKept = { ...(page ? { page } : {}), ...(worker ? { worker } : {}) };
  const dir = repoPath('bench/results');
  mkdirSync(dir, { recursive: true });
  const base = `${report.date}-soak`;
  writeFileSync(join(dir, `${base}.json`), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(dir, `${base}.md`), renderMarkdown(report, warmUpMs));
  const results = checks(report, warmUpMs);
  for (const c of results) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.value}`);
  console.log(`wrote bench/results/${base}.{json,md}`);
  process.exitCode = results.every((c) => c.ok) ? 0 : 1;
} finally {
  await browser.close();
  server.kill();
}
