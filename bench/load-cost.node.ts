// `npm run bench:load [-- --rounds=2] [--no-build]`: a Gemma-3-270M-shaped GGUF (random q8_0 weights, the published
// Gemma 3 tokenizer at 262,144 rows) loaded by URL in the playground in Chromium: time from Enter to ready, first
// downloaded into the browser's cache, then from that cache in a fresh browser on the same profile; peak resident memory
// of the renderer (the page and its worker share it) and of the GPU process. Asserts nothing.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../testing/chromium-fixtures';
import { repoPath } from '../src/gpu/testing/node-gpu';
import { median } from '../src/protocol/metrics';
import { publishedTokenizerFiles } from '../src/model/testing/published-tokenizer-fixtures';
import { writePublishedShapeGguf } from '../tools/models/published-gguf';
import { serveBuild } from './serve-build';
import { git } from './worktree';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const rounds = Number(args.get('rounds') ?? 2);
const port = Number(process.env.COHORT_PORT ?? 4176);
const SHAPE = 'Gemma-3-270M';
const MODEL_PATH = '/bench-models/gemma-3-270m-shape-q8_0.gguf';
const LOAD_TIMEOUT_MS = 20 * 60_000;

/** Written once per machine: drawing 268M random q8_0 weights takes a while. */
function modelFile(): string {
  const dir = join(tmpdir(), 'cohort-bench-load');
  const path = join(dir, 'gemma-3-270m-shape-q8_0-published-tokenizer.gguf');
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    writePublishedShapeGguf(path, SHAPE, 'q8_0', 1, publishedTokenizerFiles('gemma3'));
  }
  return path;
}

interface ProcessPeak {
  kind: string;
  peakRssMiB: number;
}

/** Every process below `root` (Chromium's browser, zygotes, renderers, GPU and utility processes). */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of parentOf) {
      if (parent === pid) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

/** VmHWM (peak resident set) of each Chromium process below this one, by its --type. */
function chromiumPeaks(): ProcessPeak[] {
  const peaks: ProcessPeak[] = [];
  for (const pid of descendants(process.pid)) {
    try {
      // Chromium rewrites its process title into one space-separated string.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/);
      if (!cmdline[0]?.includes('chrom')) continue;
      const type = cmdline.find((a) => a.startsWith('--type='))?.slice('--type='.length) ?? 'browser';
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (hwm) peaks.push({ kind: type, peakRssMiB: Number(hwm[1]) / 1024 });
    } catch {
      // gone meanwhile
    }
  }
  return peaks;
}

interface LoadRun {
  round: number;
  from: 'download' | 'cache';
  readyMs: number;
  /** The largest renderer's and the GPU process's peak resident set at ready, MiB. */
  rendererPeakMiB: number;
  gpuPeakMiB: number;
  allPeaks: ProcessPeak[];
}

async function loadOnce(profile: string, from: LoadRun['from'], round: number): Promise<LoadRun> {
  const context = await chromium.launchPersistentContext(profile, { ...chromiumLaunchOptions(), headless: true, viewport: { width: 1440, height: 900 } });
  try {
    let served = 0;
    context.on('requestfinished', (request) => {
      if (request.url().endsWith(MODEL_PATH)) served++;
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('crash', () => console.error('the page crashed'));
    page.on('console', (m) => m.type() === 'error' && console.error(`page: ${m.text()}`));
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.locator('[data-testid=model-info][data-state=ready]').waitFor({ timeout: 300_000 });
    await page.getByTestId('source-tab-url').click();
    await page.getByTestId('model-url').fill(MODEL_PATH);
    const start = Date.now();
    await page.getByTestId('model-url').press('Enter');
    await page.waitForFunction(
      () => {
        const info = document.querySelector('[data-testid=model-info]');
        const error = document.querySelector('[data-testid=model-error]');
        if (error) throw new Error(`load failed: ${error.textContent}`);
        return info?.getAttribute('data-state') === 'ready' && info.getAttribute('data-loading') === 'false' && /gemma/i.test(info.textContent ?? '');
      },
      undefined,
      { timeout: LOAD_TIMEOUT_MS, polling: 100 },
    );
    const readyMs = Date.now() - start;
    if ((from === 'cache') !== (served === 0)) throw new Error(`expected ${from === 'cache' ? 'no download' : 'a download'}, got ${served}`);
    const allPeaks = chromiumPeaks();
    const peakOf = (kind: string) => Math.max(0, ...allPeaks.filter((p) => p.kind === kind).map((p) => p.peakRssMiB));
    return { round, from, readyMs, rendererPeakMiB: peakOf('renderer'), gpuPeakMiB: peakOf('gpu-process'), allPeaks };
  } finally {
    // A browser that crashed is closed already; its error is the one to show.
    await context.close().catch(() => undefined);
  }
}

const path = modelFile();
// Served from the build folder: a route's body travels over the DevTools protocol, which a 291 MB file overruns.
const server = await serveBuild(repoPath('.'), port, {
  skipBuild: args.has('no-build'),
  beforeServe: () => {
    mkdirSync(repoPath(`dist${MODEL_PATH.slice(0, MODEL_PATH.lastIndexOf('/'))}`), { recursive: true });
    copyFileSync(path, repoPath(`dist${MODEL_PATH}`));
  },
});
const runs: LoadRun[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    const profile = mkdtempSync(join(tmpdir(), 'cohort-load-profile-'));
    try {
      for (const from of ['download', 'cache'] as const) {
        const run = await loadOnce(profile, from, round);
        console.log(JSON.stringify(run));
        runs.push(run);
      }
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  }
} finally {
  server.kill();
}

const commit = git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') !== '' ? '+changes' : '');
const date = new Date().toISOString().slice(0, 10);
const fileMiB = statSync(path).size / 2 ** 20;
const of = (from: LoadRun['from'], key: 'readyMs' | 'rendererPeakMiB' | 'gpuPeakMiB') => runs.filter((r) => r.from === from).map((r) => r[key]);
const range = (xs: number[], digits = 0) => `${median(xs).toFixed(digits)} (${xs.map((x) => x.toFixed(digits)).join(', ')})`;
const lines = [
  `# Loading a Gemma-3-270M-shaped GGUF with the published Gemma 3 tokenizer in Chromium`,
  '',
  `${date}, commit ${commit}, \`npm run bench:load -- --rounds=${rounds}\`; Chromium ${chromiumLaunchOptions().args.includes('--use-webgpu-adapter=swiftshader') ? 'on SwiftShader' : 'on the native GPU'}, load average at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}.`,
  `The file: ${SHAPE} shapes, random q8_0 weights, 262,144-token vocabulary, ${fileMiB.toFixed(0)} MiB. Time from the URL's Enter to the model card's ready; peak resident set (VmHWM) per process at ready. Median (each round).`,
  '',
  '| Load | Time to ready, s | Renderer (page + worker) peak, MiB | GPU process peak, MiB |',
  '| --- | ---: | ---: | ---: |',
  ...(['download', 'cache'] as const).map(
    (from) => `| ${from === 'download' ? 'first, downloaded into the cache' : 'again, from the cache (fresh browser)'} | ${range(of(from, 'readyMs').map((ms) => ms / 1000), 1)} | ${range(of(from, 'rendererPeakMiB'))} | ${range(of(from, 'gpuPeakMiB'))} |`,
  ),
  '',
];
const dir = repoPath('bench/results');
mkdirSync(dir, { recursive: true });
const base = join(dir, `${date}-load-cost`);
writeFileSync(`${base}.json`, JSON.stringify({ schema: 1, date, commit, shape: SHAPE, fileBytes: statSync(path).size, runs }, null, 2) + '\n');
writeFileSync(`${base}.md`, lines.join('\n'));
console.log(lines.join('\n'));
