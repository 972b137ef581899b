// Zustand store of page layout a person adjusts: the sidebar drawer (narrow screens) and the
// activity panel's share of the height or its collapse. Layout only, no engine state.
import { create } from 'zustand';

export const COHORT_SHARE_MIN = 0.15;
export const COHORT_SHARE_MAX = 0.75;

interface LayoutState {
  drawerOpen: boolean;
  cohortCollapsed: boolean;
  /** The activity panel's fraction of the workspace height when expanded. */
  cohortShare: number;
  setDrawerOpen(open: boolean): void;
  setCohortCollapsed(collapsed: boolean): void;
  setCohortShare(share: number): void;
}

export const useLayoutStore = create<LayoutState>()((set) => ({
  drawerOpen: false,
  cohortCollapsed: false,
  cohortShare: 0.32,
  setDrawerOpen(drawerOpen) {
    set({ drawerOpen });
  },
  setCohortCollapsed(cohortCollapsed) {
    set({ cohortCollapsed });
  },
  setCohortShare(share) {
    set({ cohortShare: Math.min(COHORT_SHARE_MAX, Math.max(COHORT_SHARE_MIN, share)) });
  },
}));
