// The batching benchmark in Chromium: the grid of grid.ts through the harness page's worker, its
// report and chart; and the chart alone for a report written elsewhere (bench:headless). Asserts nothing.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from '@playwright/test';
import { gpuInfo, loadModel, openHarness, runTurns } from '../e2e/harness-page';
import { saveChart } from './chart';
import { buildReport, reportBaseName, runGrid, slug, writeReport } from './grid';
import type { BenchReport } from './report';
import { benchSettings } from './settings';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

test('decode throughput, batched vs serialized', async ({ page, browser }) => {
  const settings = benchSettings();
  const startedAtMs = Date.now();
  await openHarness(page);
  const gpu = await gpuInfo(page);
  if (gpu.status !== 'ok') throw new Error(`no WebGPU: ${gpu.message}`);
  const model = await loadModel(page);
  console.log(`${model.name} on ${gpu.adapter.description || gpu.adapter.architecture}; settings ${JSON.stringify(settings)}`);

  const grid = await runGrid((request) => runTurns(page, request), settings);
  const report = buildReport(
    {
      settings,
      startedAtMs,
      model,
      gpu: { adapter: gpu.adapter.description || `${gpu.adapter.vendor} ${gpu.adapter.architecture}`, backend: process.env.COHORT_GPU === 'native' ? 'native' : 'swiftshader' },
      runtime: `Chromium ${browser.version()}`,
      machine: process.env.COHORT_BENCH_MACHINE || slug(`${gpu.adapter.vendor} ${gpu.adapter.architecture}`),
    },
    grid,
  );
  const base = reportBaseName(report);
  writeReport(report, RESULTS_DIR, base);
  await saveChart(page, report, `${RESULTS_DIR}${base}.png`);
  console.log(`wrote bench/results/${base}.{json,md,png} after ${Math.round(report.runtimeSeconds)} s`);
});

test('chart of a saved report', async ({ page }) => {
  // `npm run bench -- --chart=FILE.json` runs this test alone, for reports written without a browser.
  const file = process.env.COHORT_BENCH_CHART;
  if (!file) throw new Error('set COHORT_BENCH_CHART to a report .json (npm run bench -- --chart=FILE.json)');
  const report = JSON.parse(readFileSync(file, 'utf8')) as BenchReport;
  await openHarness(page);
  const png = file.replace(/\.json$/, '.png');
  await saveChart(page, report, png);
  console.log(`wrote ${png}`);
});
