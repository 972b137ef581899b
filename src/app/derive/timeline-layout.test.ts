// Tests for the timeline's geometry: visible columns, row order, scroll-back, hit-testing and
// cell intensity. Canvas painting itself is checked in the browser (e2e/ui.spec.ts).
import { describe, expect, it } from 'vitest';
import { row, step } from '../../protocol/testing/step-fixtures';
import { cellAlpha, columnAt, labelFontPx, layoutTimeline, timelineHeight, type TimelineGeometry } from './timeline-layout';

const geometry: TimelineGeometry = { width: 200, height: 120, labelWidth: 40, headerHeight: 20, minColumnWidth: 4, maxColumnWidth: 16, maxRowHeight: 20 };

describe('layoutTimeline', () => {
  it('keeps the latest steps that fit and widens columns when there are few', () => {
    const events = Array.from({ length: 100 }, (_, i) => step(i, i, 1, [row('a', 'decode', 1, [1])]));
    const layout = layoutTimeline(events, geometry, []);
    expect(layout.columns).toHaveLength(40); // 160 px / 4 px
    expect(layout.columns[0].stepIndex).toBe(60);
    expect(layout.columnWidth).toBe(4);
    const few = layoutTimeline(events.slice(0, 5), geometry, []);
    expect(few.columnWidth).toBe(16);
  });

  it('orders rows by the grid first, then by first appearance, and sizes them to fit', () => {
    const events = [step(0, 0, 1, [row('x', 'prefill', 10), row('b', 'prefill', 50)]), step(1, 1, 1, [row('a', 'decode', 1, [1]), row('y', 'decode', 1, [1])])];
    const layout = layoutTimeline(events, geometry, ['a', 'b', 'c']);
    expect(layout.rowIds).toEqual(['a', 'b', 'x', 'y']);
    expect(layout.rowHeight).toBe(20);
    expect(layout.maxPrefillTokens).toBe(50);
    const many = layoutTimeline([step(0, 0, 1, Array.from({ length: 10 }, (_, i) => row(`s${i}`, 'decode', 1)))], geometry, []);
    expect(many.rowHeight).toBe(10);
  });

  it('scrolls back through older steps and drops rows that left the window', () => {
    const events = [...Array.from({ length: 40 }, (_, i) => step(i, i, 1, [row('old', 'decode', 1)])), ...Array.from({ length: 40 }, (_, i) => step(40 + i, 40 + i, 1, [row('new', 'decode', 1)]))];
    expect(layoutTimeline(events, geometry, []).rowIds).toEqual(['new']);
    const back = layoutTimeline(events, geometry, [], 40);
    expect(back.rowIds).toEqual(['old']);
    expect(back.firstIndex).toBe(0);
  });

  it('gives no row to sessions closed since (not in liveIds)', () => {
    const events = [step(0, 0, 1, [row('a', 'decode', 1), row('gone', 'decode', 1)]), step(1, 1, 1, [row('b', 'decode', 1)])];
    expect(layoutTimeline(events, geometry, [], 0, new Set(['a', 'b'])).rowIds).toEqual(['a', 'b']);
    expect(layoutTimeline(events, geometry, []).rowIds).toEqual(['a', 'gone', 'b']);
  });

  it('keeps rows tall enough to label: 32 sessions grow the canvas instead of thinning rows', () => {
    const readable = { ...geometry, minRowHeight: 12 };
    const events = [step(0, 0, 1, Array.from({ length: 32 }, (_, i) => row(`s${i}`, 'decode', 1)))];
    const height = timelineHeight(32, readable, 64, 150);
    expect(height).toBe(20 + 32 * 12);
    const layout = layoutTimeline(events, { ...readable, height }, []);
    expect(layout.rowHeight).toBe(12);
    expect(labelFontPx(layout.rowHeight)).toBe(11);
    // A few rows fit in the maximum without growing; none are thinner than the minimum.
    expect(timelineHeight(4, readable, 64, 150)).toBe(20 + 4 * 20);
    expect(timelineHeight(0, readable, 64, 150)).toBe(64);
    expect(labelFontPx(5)).toBe(0);
  });

  it('finds the column under the pointer', () => {
    const events = Array.from({ length: 5 }, (_, i) => step(i, i, 1, [row('a', 'decode', 1)]));
    const layout = layoutTimeline(events, geometry, []);
    expect(columnAt(layout, geometry, 39)).toBeNull();
    expect(columnAt(layout, geometry, 40)).toBe(0);
    expect(columnAt(layout, geometry, 40 + 16 * 4 + 1)).toBe(4);
    expect(columnAt(layout, geometry, 40 + 16 * 5 + 1)).toBeNull();
  });

  it('makes big prefill chunks more intense than small ones', () => {
    expect(cellAlpha(row('a', 'prefill', 512), 512)).toBeCloseTo(1);
    expect(cellAlpha(row('a', 'prefill', 8), 512)).toBeLessThan(cellAlpha(row('a', 'prefill', 64), 512));
    expect(cellAlpha(row('a', 'decode', 1), 512)).toBeGreaterThan(0.9);
  });
});
