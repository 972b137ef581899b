// The report's tokens/sec-vs-sessions chart: series from a BenchReport, drawn on the harness page
// (uPlot) and saved as PNG. Playwright side only; reports from Node runs are charted here too.
import type { Page } from '@playwright/test';
import type { ChartSeries } from '../testing/harness/chart';
import type { BenchReport, Workload } from './report';

const SERIES_COLORS: Record<Workload, string> = { chat: '#1f77b4', niah: '#d62728' };

export function chartSeries(report: BenchReport): ChartSeries[] {
  const workloads = Object.keys(report.settings.workloads) as Workload[];
  const sessions = report.settings.sessions;
  return workloads.flatMap((w) =>
    (['batched', 'serialized'] as const).map((mode) => ({
      label: `${w === 'niah' ? 'NIAH' : 'chat'} ${mode}`,
      sessions,
      tokensPerSec: sessions.map((n) => report.throughput.find((p) => p.workload === w && p.sessions === n)?.[mode].medianTokensPerSec ?? null),
      dashed: mode === 'serialized',
      color: SERIES_COLORS[w],
    })),
  );
}

/** Draws the chart on an open harness page and screenshots it to `pngPath`. */
export async function saveChart(page: Page, report: BenchReport, pngPath: string): Promise<void> {
  const title = `Aggregate decode tokens/sec (${report.gpu.adapter}, ${report.runtime.split(',')[0]})`;
  await page.evaluate((args) => window.cohort.drawChart(args.title, args.series), { title, series: chartSeries(report) });
  await page.locator('#chart').screenshot({ path: pngPath });
}
