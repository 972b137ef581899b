// Geometry of the cohort timeline: which steps are columns, which sessions are rows, cell
// colours and hit-testing. Pure, so the canvas component only paints what this computes.
import type { StepEvent, StepRowEvent } from '../../protocol/events';

export interface TimelineGeometry {
  width: number;
  height: number;
  /** Left gutter for row labels. */
  labelWidth: number;
  /** Top strip for the step axis. */
  headerHeight: number;
  minColumnWidth: number;
  maxColumnWidth: number;
  maxRowHeight: number;
  /** Rows never get thinner than this, so their labels stay readable; the canvas grows instead. */
  minRowHeight?: number;
}

export interface TimelineLayout {
  /** Visible steps, oldest first. */
  columns: StepEvent[];
  /** Session ids drawn as rows, top to bottom. */
  rowIds: string[];
  columnWidth: number;
  rowHeight: number;
  /** Largest row token count among visible prefill cells (for intensity). */
  maxPrefillTokens: number;
  /** Index of the first visible step in the full list. */
  firstIndex: number;
}

/**
 * The last columns that fit (minus `scrollBack` steps), rows for every session that rides in
 * them: sessions in `order` first (the grid's order), then the rest by first appearance. With
 * `liveIds`, sessions not in it (closed since) get no row.
 */
export function layoutTimeline(events: readonly StepEvent[], geometry: TimelineGeometry, order: readonly string[], scrollBack = 0, liveIds?: ReadonlySet<string>): TimelineLayout {
  const plotWidth = Math.max(0, geometry.width - geometry.labelWidth);
  const maxColumns = Math.max(1, Math.floor(plotWidth / geometry.minColumnWidth));
  const end = Math.max(0, events.length - Math.max(0, Math.floor(scrollBack)));
  const firstIndex = Math.max(0, end - maxColumns);
  const columns = events.slice(firstIndex, end);
  const columnWidth = columns.length === 0 ? geometry.maxColumnWidth : Math.min(geometry.maxColumnWidth, plotWidth / Math.max(columns.length, 1));
  const seen = new Set<string>();
  const appearing: string[] = [];
  let maxPrefillTokens = 1;
  for (const event of columns) {
    for (const row of event.rows) {
      if (row.kind === 'prefill') maxPrefillTokens = Math.max(maxPrefillTokens, row.numTokens);
      if (!seen.has(row.sessionId) && (!liveIds || liveIds.has(row.sessionId))) {
        seen.add(row.sessionId);
        appearing.push(row.sessionId);
      }
    }
  }
  const rank = new Map(order.map((id, i) => [id, i]));
  const rowIds = appearing
    .map((id, i) => ({ id, key: rank.get(id) ?? order.length + i }))
    .sort((a, b) => a.key - b.key)
    .map((r) => r.id);
  const plotHeight = Math.max(0, geometry.height - geometry.headerHeight);
  const fitted = rowIds.length === 0 ? geometry.maxRowHeight : Math.min(geometry.maxRowHeight, plotHeight / rowIds.length);
  const rowHeight = Math.max(geometry.minRowHeight ?? 0, fitted);
  return { columns, rowIds, columnWidth, rowHeight, maxPrefillTokens, firstIndex };
}

/**
 * Canvas height for numRows: rows as tall as fit in maxHeight, but never under minRowHeight
 * (the canvas then grows past maxHeight and its box scrolls) and never under minHeight.
 */
export function timelineHeight(numRows: number, geometry: TimelineGeometry, minHeight: number, maxHeight: number): number {
  const rows = Math.max(2, numRows);
  const rowHeight = Math.max(geometry.minRowHeight ?? 0, Math.min(geometry.maxRowHeight, (maxHeight - geometry.headerHeight) / rows));
  return Math.max(minHeight, Math.ceil(geometry.headerHeight + rows * rowHeight));
}

/** Row label size (px) for a row height; 0: too thin to label. */
export function labelFontPx(rowHeight: number): number {
  const px = Math.min(11, Math.floor(rowHeight) - 1);
  return px >= 7 ? px : 0;
}

/** The step under x (canvas pixels), or null outside the plotted columns. */
export function columnAt(layout: TimelineLayout, geometry: TimelineGeometry, x: number): number | null {
  const i = Math.floor((x - geometry.labelWidth) / layout.columnWidth);
  return x >= geometry.labelWidth && i >= 0 && i < layout.columns.length ? i : null;
}

/** Cell opacity: decode cells are solid; prefill cells grow with their chunk (log scale). */
export function cellAlpha(row: StepRowEvent, maxPrefillTokens: number): number {
  if (row.kind === 'decode') return 0.95;
  const t = Math.log2(row.numTokens + 1) / Math.log2(Math.max(maxPrefillTokens, 1) + 1);
  return 0.3 + 0.7 * Math.min(1, Math.max(0, t));
}

/** Rows of one step keyed by session (a session has at most one row per step). */
export function rowsBySession(event: StepEvent): Map<string, StepRowEvent> {
  return new Map(event.rows.map((row) => [row.sessionId, row]));
}
