// `npm run bench:preset -- --base=REV | --speculation [--rounds=2] [--count=8] [--tokens=1200]`: the
// page's NIAH x N preset in Chromium, timed from the click until every pane is done, on this tree's
// production build and on REV's (a git worktree), or on this tree with speculation off and on (the
// new-session setting the preset follows), in alternating rounds of one sitting. Asserts nothing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { chromiumLaunchOptions } from '../testing/chromium-fixtures';
import { median } from '../src/protocol/metrics';
import { repoPath } from '../src/gpu/testing/node-gpu';
import { serveBuild } from './serve-build';
import { baseWorktree, git } from './worktree';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const baseRev = args.get('base');
const speculation = args.has('speculation');
if (!baseRev === !speculation) {
  console.error('Usage: npm run bench:preset -- --base=REV | --speculation [--rounds=2] [--count=8] [--tokens=1200]');
  process.exit(2);
}
const rounds = Number(args.get('rounds') ?? 2);
const count = Number(args.get('count') ?? 8);
const tokens = args.get('tokens') ?? '1200';
/** The preset's whole run on SwiftShader took minutes before the attention rewrite. */
const RUN_TIMEOUT_MS = 40 * 60_000;

/** base/new: two commits; off/on: this tree with the preset's speculation off, then 'auto'. */
type Side = 'base' | 'new' | 'off' | 'on';

interface PresetRun {
  side: Side;
  round: number;
  elapsedMs: number;
  /** The page's own recall figure (passing panes / panes). */
  recall: number;
  codes: string[];
}


/**
 * One fresh browser: load the embedded model, set the new-session speculation when asked, click the
 * preset, wait for every pane to finish.
 */
async function runPreset(url: string, speculationSetting?: 'off' | 'auto'): Promise<Omit<PresetRun, 'side' | 'round'>> {
  const browser = await chromium.launch({ ...chromiumLaunchOptions(), headless: true });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(url);
    await page.locator('[data-testid=model-info][data-state=ready]').waitFor({ timeout: 300_000 });
    await page.getByTestId('niah-count').fill(String(count));
    await page.getByTestId('niah-length').selectOption(tokens);
    if (speculationSetting) {
      await page.getByTestId('new-session-settings-toggle').click();
      await page.getByTestId('new-session-settings').getByTestId('setting-speculation').selectOption(speculationSetting);
      await page.getByTestId('new-session-settings-toggle').click();
    }
    const startMs = Date.now();
    await page.getByTestId('niah-preset').click();
    await page.waitForFunction(
      (n) => {
        const panes = [...document.querySelectorAll('[data-testid=session-pane]')];
        return panes.length === n && panes.every((p) => p.getAttribute('data-state') === 'done') && document.querySelectorAll('[data-testid=niah-result]').length === n;
      },
      count,
      { timeout: RUN_TIMEOUT_MS, polling: 250 },
    );
    const elapsedMs = Date.now() - startMs;
    const recall = Number((await page.getByTestId('niah-recall').getAttribute('data-recall')) ?? NaN);
    const codes = await page.locator('[data-testid=niah-result]').evaluateAll((els) => els.map((el) => el.getAttribute('data-code') ?? ''));
    return { elapsedMs, recall, codes };
  } finally {
    await browser.close();
  }
}

const newSha = git('rev-parse', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const baseSha = baseRev ? git('rev-parse', baseRev) : null;
const [first, second]: [Side, Side] = baseSha ? ['base', 'new'] : ['off', 'on'];
const ports: Record<Side, number> = { base: 4191, new: 4192, off: 4192, on: 4192 };
const servers = baseSha ? [await serveBuild(baseWorktree(baseSha), ports.base), await serveBuild(repoPath('.'), ports.new)] : [await serveBuild(repoPath('.'), ports.on)];
const runs: PresetRun[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    // alternate which side goes first so drift hits both alike
    for (const side of round % 2 === 0 ? [first, second] : [second, first]) {
      const setting = side === 'off' ? 'off' : side === 'on' ? 'auto' : undefined;
      const run = { side, round, ...(await runPreset(`http://127.0.0.1:${ports[side]}/`, setting)) };
      console.log(JSON.stringify(run));
      runs.push(run);
    }
  }
} finally {
  for (const server of servers) server.kill();
}

const medianMs = (side: Side): number => median(runs.filter((r) => r.side === side).map((r) => r.elapsedMs));
const date = new Date().toISOString().slice(0, 10);
const newCommit = newSha.slice(0, 7) + (dirty ? '+changes' : '');
const seconds = (ms: number): string => (ms / 1000).toFixed(1);
const command = baseSha ? `npm run bench:preset -- --base=${baseSha.slice(0, 7)} --rounds=${rounds}` : `npm run bench:preset -- --speculation --rounds=${rounds}`;
const report = {
  schema: 1,
  date,
  ...(baseSha ? { baseCommit: baseSha.slice(0, 7), newCommit } : { commit: newCommit, compared: 'speculation off vs on (auto)' }),
  preset: { sessions: count, haystackTokens: Number(tokens) },
  ...(process.env.COHORT_BENCH_NOTE ? { note: process.env.COHORT_BENCH_NOTE } : {}),
  runs,
  medianMs: { [first]: medianMs(first), [second]: medianMs(second) },
  /** Time of the second side over the first's (new / base, on / off): below 1 is faster. */
  ratio: medianMs(second) / medianMs(first),
};
const what = baseSha ? `${newCommit} vs ${baseSha.slice(0, 7)}` : `speculation off vs on, ${newCommit}`;
const builds = baseSha ? 'Production builds of both commits' : "This tree's production build, the preset's speculation set to off or left at auto in the settings for new sessions,";
const lines = [
  `# The page's NIAH x ${count} preset, ${what}, ${date}`,
  '',
  `${builds} in headless Chromium (SwiftShader), one fresh browser per run, timed from the preset's click until all ${count} panes are done (each prompt ~${tokens} tokens, 24 new tokens, greedy); ${rounds} alternating rounds (\`${command}\`).${report.note ? `\n\nConditions: ${report.note}` : ''}`,
  '',
  '| round | side | seconds | recall |',
  '|---:|---|---:|---:|',
  ...runs.map((r) => `| ${r.round + 1} | ${r.side} | ${seconds(r.elapsedMs)} | ${r.recall} |`),
  '',
  `Median: ${first} ${seconds(medianMs(first))} s, ${second} ${seconds(medianMs(second))} s; ${second} / ${first} = ${report.ratio.toFixed(2)}.`,
  '',
];
const out = repoPath(`bench/results/${date}-preset-${baseSha ? `vs-${baseSha.slice(0, 7)}` : 'speculation'}`);
mkdirSync(repoPath('bench/results'), { recursive: true });
writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n');
writeFileSync(`${out}.md`, lines.join('\n'));
console.log(lines.join('\n'));
console.log(`wrote ${out}.{json,md}`);
