// The batching benchmark: aggregate decode tokens/sec, batched vs serialized, at 1-16 sessions on
// two workloads, plus a long prompt joining running decodes. Writes bench/results/; asserts nothing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test, type Page } from '@playwright/test';
import type { SessionOptions } from '../src/protocol/api';
import type { RunRecord, TurnSpec } from '../src/harness/driver';
import { gpuInfo, loadModel, openHarness, runTurns } from '../e2e/harness-page';
import { decodeThroughput, joinLatency, median, timesToFirstToken, type JoinLatency } from './metrics';
import { renderMarkdown, type BenchReport, type Mode, type RunSummary, type ThroughputPoint, type Workload } from './report';
import { benchSettings, chatPrompts, joinPrompt, niahPrompts, type BenchSettings } from './settings';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const TIMING =
  'Decode tokens only: tok/s = decode rows / summed elapsedMs of the steps that carry only decode rows ' +
  '(each such step is one forward pass; prefill forwards, which sample each first token, count on neither path).';

function greedy(maxNewTokens: number): SessionOptions {
  // Every turn runs its full length, as vLLM's benchmark does: EOS would end turns unevenly.
  return { sampling: { temperature: 0 }, maxNewTokens, ignoreEos: true };
}

function workloadTurns(settings: BenchSettings, workload: Workload, n: number, maxNewTokens?: number): TurnSpec[] {
  const prompts = workload === 'chat' ? chatPrompts(n) : niahPrompts(n).map((c) => c.prompt);
  const newTokens = maxNewTokens ?? (workload === 'chat' ? settings.chatNewTokens : settings.niahNewTokens);
  return prompts.map((prompt) => ({ prompt, options: greedy(newTokens) }));
}

function summarize(run: RunRecord, repeat: number): RunSummary {
  const turns = run.turns.map((t) => t.result);
  return {
    repeat,
    ...decodeThroughput(run.steps),
    medianTimeToFirstTokenMs: median(timesToFirstToken(run)),
    meanPromptTokens: turns.reduce((n, t) => n + t.promptTokenIds.length, 0) / turns.length,
    meanNewTokens: turns.reduce((n, t) => n + t.outputTokenIds.length, 0) / turns.length,
    wallMs: run.wallMs,
  };
}

async function measurePoint(page: Page, settings: BenchSettings, workload: Workload, sessions: number): Promise<ThroughputPoint> {
  const runs: Record<Mode, RunSummary[]> = { batched: [], serialized: [] };
  let outputsMatch = true;
  for (let repeat = 0; repeat < settings.repeats; repeat++) {
    // Alternate which mode goes first so drift (thermal, background load) hits both alike.
    const modes: Mode[] = repeat % 2 === 0 ? ['batched', 'serialized'] : ['serialized', 'batched'];
    const outputs: Partial<Record<Mode, string>> = {};
    for (const mode of modes) {
      const run = await runTurns(page, { mode, turns: workloadTurns(settings, workload, sessions) });
      const summary = summarize(run, repeat);
      runs[mode].push(summary);
      outputs[mode] = JSON.stringify(run.turns.map((t) => t.result.outputTokenIds));
      console.log(
        `${workload} x${sessions} ${mode} #${repeat + 1}: ${summary.tokensPerSec.toFixed(1)} tok/s ` +
          `(${summary.decodeTokens} tokens in ${summary.forwardPasses} passes, ${(summary.wallMs / 1000).toFixed(1)} s)`,
      );
    }
    outputsMatch &&= outputs.batched === outputs.serialized;
  }
  const batched = median(runs.batched.map((r) => r.tokensPerSec));
  const serialized = median(runs.serialized.map((r) => r.tokensPerSec));
  const speedup = serialized > 0 ? batched / serialized : Number.NaN;
  return {
    workload,
    sessions,
    batched: { medianTokensPerSec: batched, runs: runs.batched },
    serialized: { medianTokensPerSec: serialized, runs: runs.serialized },
    speedup,
    efficiency: speedup / sessions,
    outputsMatch,
  };
}

/** Chat sessions decode; once they are a few steps in, a long fresh prompt joins (batched). */
async function measureJoin(page: Page, settings: BenchSettings): Promise<BenchReport['join']> {
  if (settings.joinDecoders < 1) return null;
  const runs: JoinLatency[] = [];
  for (let repeat = 0; repeat < settings.repeats; repeat++) {
    const decoders = workloadTurns(settings, 'chat', settings.joinDecoders, Math.max(settings.chatNewTokens, 48));
    const joiner: TurnSpec = { prompt: joinPrompt(settings.joinPromptTokens, repeat), options: greedy(1), afterSteps: 4 };
    const run = await runTurns(page, { mode: 'batched', turns: [...decoders, joiner] });
    const join = joinLatency(run);
    runs.push(join);
    console.log(`join #${repeat + 1}: ${JSON.stringify(join)}`);
  }
  const pick = (key: keyof JoinLatency): number => median(runs.map((r) => r[key]));
  const keys = Object.keys(runs[0]!) as Array<keyof JoinLatency>;
  return { decoders: settings.joinDecoders, runs, median: Object.fromEntries(keys.map((k) => [k, pick(k)])) as unknown as JoinLatency };
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'unknown';
}

const SERIES_COLORS: Record<Workload, string> = { chat: '#1f77b4', niah: '#d62728' };

test('decode throughput, batched vs serialized', async ({ page, browser }) => {
  const settings = benchSettings();
  const startedAt = Date.now();
  await openHarness(page);
  const gpu = await gpuInfo(page);
  if (gpu.status !== 'ok') throw new Error(`no WebGPU: ${gpu.message}`);
  const model = await loadModel(page);
  console.log(`${model.name} on ${gpu.adapter.description || gpu.adapter.architecture}; settings ${JSON.stringify(settings)}`);

  const maxSessions = Math.max(...settings.sessions);
  const throughput: ThroughputPoint[] = [];
  const workloadInfo = {} as BenchReport['settings']['workloads'];
  for (const workload of settings.workloads) {
    // Warm-up: compiles every pipeline and fills the prefix cache with this workload's prompts,
    // so every measured run starts alike (prefill is not measured; decode work is unchanged).
    const warm = await runTurns(page, { mode: 'batched', turns: workloadTurns(settings, workload, maxSessions, 4) });
    await runTurns(page, { mode: 'serialized', turns: workloadTurns(settings, workload, 1, 4) });
    workloadInfo[workload] = {
      maxNewTokens: workload === 'chat' ? settings.chatNewTokens : settings.niahNewTokens,
      meanPromptTokens: warm.turns.reduce((n, t) => n + t.result.promptTokenIds.length, 0) / warm.turns.length,
      description: workload === 'chat' ? 'short chat turns' : 'needle-in-a-haystack prompts',
    };
    for (const sessions of settings.sessions) throughput.push(await measurePoint(page, settings, workload, sessions));
  }
  const join = await measureJoin(page, settings);

  const date = new Date().toISOString().slice(0, 10);
  const backend = process.env.COHORT_GPU === 'native' ? 'native' : 'swiftshader';
  const machine = process.env.COHORT_BENCH_MACHINE || slug(`${gpu.adapter.vendor} ${gpu.adapter.architecture}`);
  const report: BenchReport = {
    schema: 1,
    date,
    machine,
    quick: settings.quick,
    gpu: { adapter: gpu.adapter.description || `${gpu.adapter.vendor} ${gpu.adapter.architecture}`, backend },
    browser: `Chromium ${browser.version()}`,
    model,
    settings: { sessions: settings.sessions, repeats: settings.repeats, workloads: workloadInfo, timing: TIMING },
    throughput,
    join,
    runtimeSeconds: (Date.now() - startedAt) / 1000,
  };

  const base = `${date}-${machine}${settings.quick ? '-quick' : ''}`;
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(`${RESULTS_DIR}${base}.json`, JSON.stringify(report, null, 2) + '\n');
  await page.evaluate(
    (args) => window.cohort.drawChart(args.title, args.series),
    {
      title: `Aggregate decode tokens/sec (${report.gpu.adapter})`,
      series: settings.workloads.flatMap((w) =>
        (['batched', 'serialized'] as const).map((mode) => ({
          label: `${w === 'niah' ? 'NIAH' : 'chat'} ${mode}`,
          sessions: settings.sessions,
          tokensPerSec: settings.sessions.map((n) => throughput.find((p) => p.workload === w && p.sessions === n)?.[mode].medianTokensPerSec ?? null),
          dashed: mode === 'serialized',
          color: SERIES_COLORS[w],
        })),
      ),
    },
  );
  await page.locator('#chart').screenshot({ path: `${RESULTS_DIR}${base}.png` });
  writeFileSync(`${RESULTS_DIR}${base}.md`, renderMarkdown(report, `${base}.png`));
  console.log(`wrote bench/results/${base}.{json,md,png} after ${Math.round(report.runtimeSeconds)} s`);
});
