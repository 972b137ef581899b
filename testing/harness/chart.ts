// The benchmark's chart: aggregate decode tokens/sec against sessions, one line per mode and
// workload, drawn with uPlot on the harness page so Playwright can screenshot it. No data work.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  /** Session counts (x) and the median tokens/sec at each (y); the same x for every series. */
  sessions: number[];
  tokensPerSec: Array<number | null>;
  /** Solid for batched, dashed for serialized. */
  dashed?: boolean;
  color: string;
}

/** Replaces any earlier chart in `parent` with a new one; its element has id "chart". */
export function drawThroughputChart(parent: HTMLElement, title: string, series: ChartSeries[]): void {
  document.getElementById('chart')?.remove();
  const host = document.createElement('div');
  host.id = 'chart';
  host.style.cssText = 'display:inline-block;padding:12px;background:#fff;font:13px system-ui,sans-serif';
  parent.append(host);
  const sessions = series[0]?.sessions ?? [];
  const data: uPlot.AlignedData = [sessions, ...series.map((s) => s.tokensPerSec)];
  new uPlot(
    {
      title,
      width: 760,
      height: 420,
      // Sessions double at each point: a log2 x axis spaces them evenly.
      // A static legend: the chart is for a screenshot, not for hovering.
      legend: { live: false },
      scales: { x: { time: false, distr: 3, log: 2 }, y: { range: (_u, _min, max) => [0, max * 1.1] } },
      axes: [
        { label: 'concurrent sessions', values: (_u, ticks) => ticks.map(String) },
        { label: 'aggregate decode tokens/sec', size: 70 },
      ],
      series: [
        { label: 'sessions' },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          dash: s.dashed ? [6, 4] : undefined,
          points: { show: true, size: 7 },
        })),
      ],
    },
    data,
    host,
  );
}
