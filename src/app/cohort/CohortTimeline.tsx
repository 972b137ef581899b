// The cohort timeline: one column per engine step in the panel's window, one row per open
// session, painted on a canvas once per frame; hover shows that step, the wheel scrolls back.
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { columnAt, labelFontPx, layoutTimeline, timelineHeight, type TimelineGeometry } from '../derive/timeline-layout';
import { useSessionsStore } from '../state/sessions-store';
import { useTelemetryStore } from '../state/telemetry-store';
import { useActivitySteps, useLiveEngineIds } from './use-activity-steps';
import { useElementWidth } from './use-element-width';
import { paintTimeline } from './timeline-paint';
import { StepTooltip } from './StepTooltip';

const MIN_HEIGHT = 64;
const MAX_HEIGHT = 150;
const SCROLLBAR_ROOM = 16;
// Rows stop thinning at 12 px (an 11 px label); past ~11 rows the canvas grows and its box scrolls.
const BASE_GEOMETRY = { height: MAX_HEIGHT, labelWidth: 64, headerHeight: 16, minColumnWidth: 5, maxColumnWidth: 28, maxRowHeight: 18, minRowHeight: 12 };

export function CohortTimeline() {
  const version = useTelemetryStore((s) => s.version);
  const order = useSessionsStore((s) => s.order);
  const views = useSessionsStore((s) => s.views);
  const [container, width] = useElementWidth<HTMLDivElement>();
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hoverX, setHoverX] = useState<number | null>(null);
  const [scrollBack, setScrollBack] = useState(0);

  const engineOrder = useMemo(() => order.map((id) => views.get(id)?.engineId).filter((id): id is string => !!id), [order, views]);
  const liveIds = useLiveEngineIds();
  const events = useActivitySteps(version);
  const back = Math.min(scrollBack, Math.max(0, events.length - 1));
  const { layout, geometry } = useMemo(() => {
    // The canvas grows with its rows, so a few sessions leave room for the grid.
    const wide = { ...BASE_GEOMETRY, width: Math.max(200, width) };
    const numRows = layoutTimeline(events, wide, engineOrder, back, liveIds).rowIds.length;
    const height = timelineHeight(numRows, wide, MIN_HEIGHT, MAX_HEIGHT);
    // Taller than its box: leave room for the box's scrollbar so the newest steps stay in view.
    const fitted: TimelineGeometry = { ...wide, height, width: height > MAX_HEIGHT ? wide.width - SCROLLBAR_ROOM : wide.width };
    return { geometry: fitted, layout: layoutTimeline(events, fitted, engineOrder, back, liveIds) };
  }, [events, width, engineOrder, back, liveIds]);
  const hoverColumn = hoverX === null ? null : columnAt(layout, geometry, hoverX);

  useLayoutEffect(() => {
    const el = canvas.current;
    const ctx = el?.getContext('2d');
    if (!el || !ctx) return;
    const dpr = window.devicePixelRatio || 1;
    el.width = Math.round(geometry.width * dpr);
    el.height = Math.round(geometry.height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const { views: currentViews, paneByEngineId } = useSessionsStore.getState();
    const labelOf = (sessionId: string) => {
      const paneId = paneByEngineId.get(sessionId);
      return (paneId && currentViews.get(paneId)?.label) || sessionId;
    };
    paintTimeline(ctx, layout, geometry, labelOf, hoverColumn);
  }, [layout, geometry, hoverColumn]);

  const hovered = hoverColumn === null ? null : layout.columns[hoverColumn];
  return (
    <div className="timeline" ref={container}>
      <div className="timeline-head">
        <h3>Cohort timeline</h3>
        <span className="legend">
          <i className="swatch prefill" /> prefill <i className="swatch decode" /> decode <i className="swatch absent" /> not in step <i className="swatch draft-accepted" /> drafts accepted <i className="swatch draft-rejected" /> rejected
        </span>
        <span className="spacer" />
        {back > 0 ? (
          <button type="button" className="link" onClick={() => setScrollBack(0)}>
            {back} steps back · follow live
          </button>
        ) : (
          <span className="muted small">{events.length > 0 ? `following live · last ${events.length} steps` : 'waiting for steps'}</span>
        )}
      </div>
      <div className="timeline-rows" style={{ maxHeight: MAX_HEIGHT }}>
        <canvas
          ref={canvas}
          data-testid="cohort-timeline"
          data-rows={layout.rowIds.length}
          data-steps={layout.columns.length}
          data-row-height={layout.rowHeight}
          data-label-px={labelFontPx(layout.rowHeight)}
          style={{ width: geometry.width, height: geometry.height }}
          onMouseMove={(e) => setHoverX(e.clientX - e.currentTarget.getBoundingClientRect().left)}
          onMouseLeave={() => setHoverX(null)}
          onWheel={(e) => {
            // When the rows overflow their box the vertical wheel scrolls them; sideways (or Shift) scrolls steps.
            const delta = geometry.height > MAX_HEIGHT ? e.deltaX : Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY;
            if (delta === 0) return;
            const maxBack = Math.max(0, events.length - layout.columns.length);
            setScrollBack(Math.max(0, Math.min(maxBack, back + Math.sign(delta) * Math.max(1, Math.round(layout.columns.length / 8)))));
          }}
        />
      </div>
      {hovered && hoverX !== null && <StepTooltip event={hovered} x={hoverX} width={geometry.width} />}
    </div>
  );
}
