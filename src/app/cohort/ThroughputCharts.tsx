// Live charts over the activity panel's window: decode tok/s for all sessions together and per
// open session, and the KV block pool with the queue depth. Recomputed at most 4 times a second.
import { useMemo } from 'react';
import type uPlot from 'uplot';
import { countBreaks, kvSeries } from '../derive/activity-window';
import { throughputSeries } from '../derive/throughput';
import { useSessionsStore } from '../state/sessions-store';
import { stepOriginMs } from '../state/step-feed';
import { useTelemetryStore } from '../state/telemetry-store';
import { UPlotChart, type ChartSeries } from './UPlotChart';
import { useActivitySteps, useLiveEngineIds } from './use-activity-steps';
import { useThrottled } from './use-throttled';

/** Trailing window of the tok/s line; a pause longer than it breaks both charts' lines. */
const WINDOW_MS = 1000;
const PALETTE = ['#4cc2ff', '#a78bfa', '#34d399', '#f472b6', '#facc15', '#fb923c', '#60a5fa', '#f87171', '#2dd4bf', '#c084fc', '#a3e635', '#e879f9'];
/** Per-session lines beyond this many would be unreadable; the aggregate line covers all. */
const MAX_SESSION_SERIES = 8;
const HEIGHT = 130;

function useRecentEvents() {
  return useActivitySteps(useThrottled(useTelemetryStore((s) => s.version), 250));
}

export function ThroughputChart() {
  const events = useRecentEvents();
  const paneByEngineId = useSessionsStore((s) => s.paneByEngineId);
  const views = useSessionsStore((s) => s.views);
  const liveIds = useLiveEngineIds();
  const sessionIds = useMemo(() => {
    const ids: string[] = [];
    const seen = new Set<string>();
    for (let i = events.length - 1; i >= 0 && ids.length < MAX_SESSION_SERIES; i--) {
      for (const row of events[i].rows) {
        // Closed sessions get no line of their own; the aggregate still counts their tokens.
        if (!seen.has(row.sessionId) && liveIds.has(row.sessionId)) {
          seen.add(row.sessionId);
          ids.push(row.sessionId);
        }
      }
    }
    return ids.sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  }, [events, liveIds]);
  const { series, data, breaks } = useMemo(() => {
    const origin = stepOriginMs ?? 0;
    const s = throughputSeries(events, origin, WINDOW_MS, sessionIds);
    const labelOf = (id: string) => views.get(paneByEngineId.get(id) ?? '')?.label ?? id;
    const chartSeries: ChartSeries[] = [
      { label: 'all', color: '#f5f7fb', width: 2.5 },
      ...sessionIds.map((id, i) => ({ label: labelOf(id), color: PALETTE[i % PALETTE.length], width: 1.25 })),
    ];
    const aligned = [s.x, s.aggregate, ...sessionIds.map((id) => s.bySession.get(id) ?? [])] as uPlot.AlignedData;
    return { series: chartSeries, data: aligned, breaks: countBreaks(s.aggregate) };
  }, [events, sessionIds, views, paneByEngineId]);
  return (
    <div className="chart-box">
      <h3>Decode tokens / s</h3>
      <UPlotChart testId="throughput-chart" height={HEIGHT} series={series} data={data} yLabel="tok/s" attributes={{ 'data-steps': events.length, 'data-breaks': breaks }} />
    </div>
  );
}

const KV_SERIES: ChartSeries[] = [
  { label: 'used', color: '#4cc2ff', width: 2 },
  // Free blocks dwarf the rest on a large pool: hidden until its legend entry is clicked.
  { label: 'free', color: '#34d399', width: 1.5, hidden: true },
  { label: 'shared', color: '#a78bfa', width: 1.5 },
  { label: 'queue', color: '#f5a524', width: 1.5, scale: 'y2', dash: [4, 3] },
];

/** The same lines for a server's samples: busy and idle slots, deferred requests. */
const SERVER_SERIES: ChartSeries[] = [
  { label: 'busy slots', color: '#4cc2ff', width: 2 },
  { label: 'idle slots', color: '#34d399', width: 1.5, hidden: true },
  { label: 'n/a', color: '#a78bfa', width: 1.5, hidden: true },
  { label: 'deferred', color: '#f5a524', width: 1.5, scale: 'y2', dash: [4, 3] },
];

export function KvChart() {
  const events = useRecentEvents();
  const server = events.length > 0 ? events[events.length - 1].server : undefined;
  const { data, breaks } = useMemo(() => {
    const s = kvSeries(events, stepOriginMs ?? 0, WINDOW_MS);
    return { data: [s.x, s.used, s.free, s.shared, s.queue] as uPlot.AlignedData, breaks: countBreaks(s.used) };
  }, [events]);
  return (
    <div className="chart-box">
      <h3>{server ? `${server.kind} slots and deferred requests (sampled)` : 'KV blocks and queue'}</h3>
      <UPlotChart
        testId="kv-chart"
        height={HEIGHT}
        series={server ? SERVER_SERIES : KV_SERIES}
        data={data}
        yLabel={server ? 'slots' : 'blocks'}
        y2Label={server ? 'deferred' : 'queued'}
        attributes={{ 'data-steps': events.length, 'data-breaks': breaks, 'data-source': server ? 'server' : 'engine' }}
      />
    </div>
  );
}
