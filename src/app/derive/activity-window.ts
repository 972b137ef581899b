// Which steps the activity panel shows: the last N received since the last "clear", and where
// the engine sat idle between them (the charts break their lines there). Pure: no stores, no DOM.
import type { StepEvent } from '../../protocol/events';
import { stepEndMs } from '../../protocol/metrics';

/** Window sizes a person can pick; the step ring keeps 2,000, so the largest is all of it. */
export const ACTIVITY_WINDOW_OPTIONS = [200, 500, 2000] as const;
export const DEFAULT_ACTIVITY_WINDOW = 500;

/**
 * The last `windowSteps` records after `clearedThrough` (the newest record when "clear" was
 * pressed). A marker no longer in the ring (overwritten, or the ring was emptied by a model
 * load) means every record in it is newer than the clear, so all of them count.
 */
export function recentSteps<T>(records: readonly T[], clearedThrough: T | null, windowSteps: number): T[] {
  const marker = clearedThrough === null ? -1 : records.lastIndexOf(clearedThrough);
  const start = Math.max(marker + 1, records.length - Math.max(1, Math.floor(windowSteps)));
  return records.slice(start);
}

/** Indices i (>= 1) where the engine was idle longer than gapMs between step i-1's end and step i. */
export function idleGapsBefore(events: readonly StepEvent[], gapMs: number): number[] {
  const gaps: number[] = [];
  for (let i = 1; i < events.length; i++) {
    if (events[i].startedAtMs - stepEndMs(events[i - 1]) > gapMs) gaps.push(i);
  }
  return gaps;
}

export interface KvSeries {
  /** Seconds since originMs at each step's end, plus one point just after a step before each idle gap. */
  x: number[];
  used: (number | null)[];
  free: (number | null)[];
  shared: (number | null)[];
  queue: (number | null)[];
}

/** The KV chart's lines, with a null point in each idle gap so uPlot does not draw across it. */
export function kvSeries(events: readonly StepEvent[], originMs: number, gapMs: number): KvSeries {
  const out: KvSeries = { x: [], used: [], free: [], shared: [], queue: [] };
  const gaps = new Set(idleGapsBefore(events, gapMs));
  const push = (x: number, e: StepEvent | null) => {
    out.x.push(x);
    // a server sample has no blocks to show: its slots stand in for them (busy / idle), its deferred requests for the queue
    const server = e?.server;
    const idleSlots = server?.numSlots !== undefined && server.numBusy !== undefined ? server.numSlots - server.numBusy : null;
    out.used.push(e ? (server ? (server.numBusy ?? null) : e.kvBlocksUsed) : null);
    out.free.push(e ? (server ? idleSlots : e.kvBlocksFree) : null);
    out.shared.push(e ? (server ? null : e.kvBlocksShared) : null);
    out.queue.push(e ? (server ? (server.numDeferred ?? e.queueDepth) : e.queueDepth) : null);
  };
  events.forEach((event, i) => {
    if (gaps.has(i)) push((stepEndMs(events[i - 1]) - originMs) / 1000 + 1e-3, null);
    push((stepEndMs(event) - originMs) / 1000, event);
  });
  return out;
}

/** Where a series is null: the breaks uPlot leaves in its line. */
export function countBreaks(values: readonly (number | null)[]): number {
  return values.reduce<number>((n, v) => (v === null ? n + 1 : n), 0);
}
