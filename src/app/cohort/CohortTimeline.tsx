// The cohort timeline: one column per engine step, one row per session, painted on a canvas
// from the step ring once per frame; hover shows that step's details, the wheel scrolls back.
import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { columnAt, layoutTimeline, type TimelineGeometry } from '../derive/timeline-layout';
import { useSessionsStore } from '../state/sessions-store';
import { stepRing } from '../state/step-feed';
import { useTelemetryStore } from '../state/telemetry-store';
import { useElementWidth } from './use-element-width';
import { paintTimeline } from './timeline-paint';
import { StepTooltip } from './StepTooltip';

const MIN_HEIGHT = 64;
const MAX_HEIGHT = 150;
const BASE_GEOMETRY = { height: MAX_HEIGHT, labelWidth: 64, headerHeight: 16, minColumnWidth: 5, maxColumnWidth: 28, maxRowHeight: 18 };

export function CohortTimeline() {
  const version = useTelemetryStore((s) => s.version);
  const order = useSessionsStore((s) => s.order);
  const views = useSessionsStore((s) => s.views);
  const [container, width] = useElementWidth<HTMLDivElement>();
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hoverX, setHoverX] = useState<number | null>(null);
  const [scrollBack, setScrollBack] = useState(0);

  const engineOrder = useMemo(() => order.map((id) => views.get(id)?.engineId).filter((id): id is string => !!id), [order, views]);
  // version moves once per frame with new steps; the ring itself is not reactive.
  const events = useMemo(() => stepRing.toArray().map((r) => r.event), [version]);
  const back = Math.min(scrollBack, Math.max(0, events.length - 1));
  const { layout, geometry } = useMemo(() => {
    // The canvas grows with its rows (up to MAX_HEIGHT), so a few sessions leave room for the grid.
    const wide = { ...BASE_GEOMETRY, width: Math.max(200, width) };
    const numRows = layoutTimeline(events, wide, engineOrder, back).rowIds.length;
    const height = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, wide.headerHeight + Math.max(2, numRows) * wide.maxRowHeight));
    const fitted: TimelineGeometry = { ...wide, height };
    return { geometry: fitted, layout: layoutTimeline(events, fitted, engineOrder, back) };
  }, [events, width, engineOrder, back]);
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
          <i className="swatch prefill" /> prefill <i className="swatch decode" /> decode <i className="swatch absent" /> not in step
        </span>
        <span className="spacer" />
        {back > 0 ? (
          <button type="button" className="link" onClick={() => setScrollBack(0)}>
            {back} steps back · follow live
          </button>
        ) : (
          <span className="muted small">{events.length > 0 ? `following live · ${stepRing.totalPushed} steps` : 'waiting for steps'}</span>
        )}
      </div>
      <canvas
        ref={canvas}
        data-testid="cohort-timeline"
        data-rows={layout.rowIds.length}
        data-steps={layout.columns.length}
        style={{ width: geometry.width, height: geometry.height }}
        onMouseMove={(e) => setHoverX(e.clientX - e.currentTarget.getBoundingClientRect().left)}
        onMouseLeave={() => setHoverX(null)}
        onWheel={(e) => {
          const delta = Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY;
          const maxBack = Math.max(0, events.length - layout.columns.length);
          setScrollBack(Math.max(0, Math.min(maxBack, back + Math.sign(delta) * Math.max(1, Math.round(layout.columns.length / 8)))));
        }}
      />
      {hovered && hoverX !== null && <StepTooltip event={hovered} x={hoverX} width={geometry.width} />}
    </div>
  );
}
