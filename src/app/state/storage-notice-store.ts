// What the page says about its saved sessions: storage refused (working in memory), or saved
// records it could not read (set aside). Each shown once, until dismissed. Filled by session-persistence.ts.
import { create } from 'zustand';
import type { StorageNotice } from './pane-sync';

interface StorageNoticeState {
  memory: string | null;
  /** Keys of records set aside, with why. */
  unreadable: Array<{ key: string; asideKey: string; why: string }>;
  add(notice: StorageNotice): void;
  dismiss(): void;
}

export const useStorageNoticeStore = create<StorageNoticeState>()((set, get) => ({
  memory: null,
  unreadable: [],
  add(notice) {
    if (notice.kind === 'memory') set({ memory: notice.reason });
    else set({ unreadable: [...get().unreadable, ...notice.setAside] });
  },
  dismiss() {
    set({ memory: null, unreadable: [] });
  },
}));
