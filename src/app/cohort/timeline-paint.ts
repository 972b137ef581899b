// Paints a computed timeline layout onto a 2D canvas: row labels, step ticks, one cell per
// (step, session) coloured prefill / decode / absent, a verify row's drafts marked along its
// foot (accepted part, rejected part). No layout decisions are made here.
import { draftMark } from '../derive/speculation-view';
import { cellAlpha, labelFontPx, rowsBySession, type TimelineGeometry, type TimelineLayout } from '../derive/timeline-layout';

export const TIMELINE_COLORS = {
  background: '#121722',
  absent: '#1b2231',
  prefill: '245, 165, 36',
  decode: '76, 194, 255',
  label: '#9aa6bd',
  tick: '#5d6a82',
  hover: 'rgba(255, 255, 255, 0.12)',
  finished: '#e8edf7',
  draftAccepted: '#5ee08a',
  draftRejected: '#f0645a',
};

export function paintTimeline(
  ctx: CanvasRenderingContext2D,
  layout: TimelineLayout,
  geometry: TimelineGeometry,
  labelOf: (sessionId: string) => string,
  hoverColumn: number | null,
): void {
  const { width, height, labelWidth, headerHeight } = geometry;
  const { columnWidth: cw, rowHeight: rh } = layout;
  ctx.fillStyle = TIMELINE_COLORS.background;
  ctx.fillRect(0, 0, width, height);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';

  // Step ticks: about every 60 px, on step indices divisible by a round number.
  const every = [1, 2, 5, 10, 20, 50, 100, 200, 500].find((n) => n * cw >= 60) ?? 1000;
  ctx.fillStyle = TIMELINE_COLORS.tick;
  layout.columns.forEach((event, i) => {
    if (event.stepIndex % every !== 0) return;
    const x = labelWidth + i * cw;
    ctx.fillRect(x, headerHeight - 5, 1, 5);
    ctx.fillText(String(event.stepIndex), x + 2, headerHeight / 2 - 1);
  });

  const gap = cw >= 4 ? 1 : 0;
  const rowGap = rh >= 6 ? 2 : 0;
  // Labels shrink with the rows and are left out once rows are too thin to read.
  const labelPx = labelFontPx(rh);
  layout.rowIds.forEach((sessionId, r) => {
    const y = headerHeight + r * rh;
    if (labelPx > 0) {
      ctx.font = `${labelPx}px system-ui, sans-serif`;
      ctx.fillStyle = TIMELINE_COLORS.label;
      ctx.fillText(labelOf(sessionId), 6, y + rh / 2, labelWidth - 10);
    }
    ctx.fillStyle = TIMELINE_COLORS.absent;
    ctx.fillRect(labelWidth, y + rowGap / 2, layout.columns.length * cw, rh - rowGap);
  });

  layout.columns.forEach((event, i) => {
    const x = labelWidth + i * cw;
    const rows = rowsBySession(event);
    layout.rowIds.forEach((sessionId, r) => {
      const row = rows.get(sessionId);
      if (!row) return;
      const y = headerHeight + r * rh + rowGap / 2;
      const rgb = row.kind === 'prefill' ? TIMELINE_COLORS.prefill : TIMELINE_COLORS.decode;
      ctx.fillStyle = `rgba(${rgb}, ${cellAlpha(row, layout.maxPrefillTokens).toFixed(3)})`;
      ctx.fillRect(x, y, Math.max(1, cw - gap), rh - rowGap);
      // Drafts: a strip along the cell's foot, accepted share from the left, the rest rejected.
      const mark = draftMark(row);
      if (mark) {
        const cellWidth = Math.max(1, cw - gap);
        const stripHeight = Math.max(2, Math.round((rh - rowGap) / 3));
        const accepted = Math.round(cellWidth * mark.acceptedShare);
        ctx.fillStyle = TIMELINE_COLORS.draftRejected;
        ctx.fillRect(x + accepted, y + rh - rowGap - stripHeight, cellWidth - accepted, stripHeight);
        ctx.fillStyle = TIMELINE_COLORS.draftAccepted;
        ctx.fillRect(x, y + rh - rowGap - stripHeight, accepted, stripHeight);
      }
      if (row.finishReason) {
        ctx.fillStyle = TIMELINE_COLORS.finished;
        ctx.fillRect(x + Math.max(1, cw - gap) - 2, y, 2, rh - rowGap);
      }
      // Chunk sizes as text where a cell is wide enough to read them.
      if (row.kind === 'prefill' && cw >= 22 && rh >= 12) {
        ctx.font = '11px system-ui, sans-serif';
        ctx.fillStyle = '#1a1205';
        ctx.fillText(String(row.numTokens), x + 2, y + (rh - rowGap) / 2, cw - 4);
      }
    });
  });

  if (hoverColumn !== null) {
    ctx.fillStyle = TIMELINE_COLORS.hover;
    ctx.fillRect(labelWidth + hoverColumn * cw, headerHeight, cw, height - headerHeight);
  }
}
