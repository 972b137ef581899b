// Zustand store of the engine's live figures: a version that moves once per animation frame
// with new steps, the latest step's counters and the mode asked for. Steps live in step-feed.ts.
import { create } from 'zustand';
import type { EngineMode, StepEvent } from '../../protocol/events';

/** A StepEvent without its rows: the counters the header and charts show. */
export type StepSummary = Omit<StepEvent, 'rows' | 'finished'>;

interface TelemetryState {
  version: number;
  latest: StepSummary | null;
  requestedMode: EngineMode;
  noteSteps(latest: StepEvent): void;
  setRequestedMode(mode: EngineMode): void;
  clear(): void;
}

export const useTelemetryStore = create<TelemetryState>()((set) => ({
  version: 0,
  latest: null,
  requestedMode: 'batched',
  noteSteps(latest) {
    const { rows: _rows, finished: _finished, ...summary } = latest;
    set((s) => ({ version: s.version + 1, latest: summary }));
  },
  setRequestedMode(mode) {
    set({ requestedMode: mode });
  },
  clear() {
    set((s) => ({ version: s.version + 1, latest: null }));
  },
}));
