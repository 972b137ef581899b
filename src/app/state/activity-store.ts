// Zustand store of what the activity panel shows: how many recent steps (its window) and the
// newest step when "clear" was pressed. The steps themselves stay in step-feed.ts's ring.
import { create } from 'zustand';
import { DEFAULT_ACTIVITY_WINDOW } from '../derive/activity-window';
import type { ReceivedStep } from '../derive/step-ring';
import { stepRing } from './step-feed';

interface ActivityState {
  windowSteps: number;
  /** Steps up to this one are hidden (derive/activity-window.ts); null: nothing cleared. */
  clearedThrough: ReceivedStep | null;
  setWindowSteps(windowSteps: number): void;
  /** Hides every step received so far; later steps show as they come. */
  clear(): void;
}

export const useActivityStore = create<ActivityState>()((set) => ({
  windowSteps: DEFAULT_ACTIVITY_WINDOW,
  clearedThrough: null,
  setWindowSteps(windowSteps) {
    set({ windowSteps });
  },
  clear() {
    set({ clearedThrough: stepRing.last() ?? null });
  },
}));
