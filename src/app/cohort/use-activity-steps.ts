// Hooks the activity panel's views share: the steps in its window (the last N since "clear")
// and the engine sessions that still have a pane (closed ones are dropped from the views).
import { useMemo } from 'react';
import type { StepEvent } from '../../protocol/events';
import { recentSteps } from '../derive/activity-window';
import { useActivityStore } from '../state/activity-store';
import { useSessionsStore } from '../state/sessions-store';
import { stepRing } from '../state/step-feed';

/** The window's steps, oldest first; re-read when `version` (the telemetry store's) moves. */
export function useActivitySteps(version: number): StepEvent[] {
  const windowSteps = useActivityStore((s) => s.windowSteps);
  const clearedThrough = useActivityStore((s) => s.clearedThrough);
  // The ring is not reactive: version says when to read it again.
  return useMemo(() => recentSteps(stepRing.toArray(), clearedThrough, windowSteps).map((r) => r.event), [version, windowSteps, clearedThrough]);
}

/** Engine session ids bound to an open pane. */
export function useLiveEngineIds(): ReadonlySet<string> {
  const paneByEngineId = useSessionsStore((s) => s.paneByEngineId);
  return useMemo(() => new Set(paneByEngineId.keys()), [paneByEngineId]);
}
