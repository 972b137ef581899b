// A small React wrapper around uPlot: builds the plot when its series change, feeds it new data
// otherwise, follows its container's width; the legend shows the values under the cursor.
// Knows nothing about Cohort's data.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useElementWidth } from './use-element-width';

export interface ChartSeries {
  label: string;
  color: string;
  /** Scale key; series on a second scale get a right-hand axis. */
  scale?: string;
  width?: number;
  dash?: number[];
  /** Starts switched off (click its legend entry to show it). */
  hidden?: boolean;
}

interface Props {
  testId: string;
  height: number;
  series: ChartSeries[];
  /** [x, ...one array per series]. */
  data: uPlot.AlignedData;
  yLabel: string;
  y2Label?: string;
  /** data-* attributes for the chart's box (what tests and tools read). */
  attributes?: Record<`data-${string}`, string | number>;
}

/** Legend values: integers as they are, others to one decimal; a gap (null) as a dash. */
function formatValue(_u: uPlot, value: number | null): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

const AXIS = { stroke: '#8d98ad', grid: { stroke: 'rgba(255,255,255,0.06)', width: 1 }, ticks: { stroke: 'rgba(255,255,255,0.12)', width: 1 } };

function buildOptions(width: number, height: number, series: ChartSeries[], yLabel: string, y2Label?: string): uPlot.Options {
  const hasY2 = series.some((s) => s.scale && s.scale !== 'y');
  return {
    width,
    height,
    // live: hovering the plot shows every series' value at that point in the legend.
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] }, ...(hasY2 ? { y2: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } } : {}) },
    axes: [
      { ...AXIS, label: 's', labelSize: 14, size: 30 },
      { ...AXIS, label: yLabel, labelSize: 14, size: 44, scale: 'y' },
      ...(hasY2 ? [{ ...AXIS, label: y2Label ?? '', labelSize: 14, size: 36, scale: 'y2', side: 1, grid: { show: false } }] : []),
    ],
    series: [
      { label: 't (s)', value: formatValue },
      // spanGaps false: a null point (an idle gap) breaks the line instead of bridging it.
      ...series.map((s) => ({ label: s.label, stroke: s.color, width: s.width ?? 1.5, scale: s.scale ?? 'y', spanGaps: false, value: formatValue, points: { show: false }, ...(s.dash ? { dash: s.dash } : {}), ...(s.hidden ? { show: false } : {}) })),
    ],
  };
}

export function UPlotChart({ testId, height, series, data, yLabel, y2Label, attributes }: Props) {
  const [container, width] = useElementWidth<HTMLDivElement>();
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const seriesKey = series.map((s) => `${s.label}:${s.color}:${s.scale ?? 'y'}:${s.hidden ? 0 : 1}`).join('|');
  const latestData = useRef(data);
  latestData.current = data;

  useEffect(() => {
    if (!host.current || width <= 0) return;
    plot.current = new uPlot(buildOptions(width, height, series, yLabel, y2Label), latestData.current, host.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the set of series changes; data and size are fed below.
  }, [seriesKey, height, yLabel, y2Label, width > 0]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  useEffect(() => {
    if (width > 0) plot.current?.setSize({ width, height });
  }, [width, height]);

  return (
    <div ref={container} className="chart" data-testid={testId} {...attributes}>
      <div ref={host} />
    </div>
  );
}
