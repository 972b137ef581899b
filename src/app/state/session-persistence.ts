// Wires the panes' saving into the page: IndexedDB records (pane-storage.ts), a BroadcastChannel
// that keeps the page's tabs in step, pagehide. The rules live in pane-sync.ts and derive/pane-records.ts.
import { getEngineClient } from '../engine-client';
import { loadPanes, writePanes } from './pane-storage';
import { createPaneSync, type PaneChannel, type PaneMessage, type PaneSync } from './pane-sync';
import { closeSession } from './session-actions';
import { useSessionsStore } from './sessions-store';
import { useStorageNoticeStore } from './storage-notice-store';

const CHANNEL = 'cohort-panes';

let sync: PaneSync | null = null;

function openChannel(): PaneChannel | null {
  if (typeof BroadcastChannel === 'undefined') return null;
  const channel = new BroadcastChannel(CHANNEL);
  return {
    post: (message) => channel.postMessage(message),
    listen: (onMessage) => channel.addEventListener('message', (event: MessageEvent<PaneMessage>) => onMessage(event.data)),
  };
}

/** Reads the saved panes into the store, then saves every later change. Once per page. */
export async function startSessionPersistence(): Promise<void> {
  if (sync) return;
  sync = createPaneSync({
    store: useSessionsStore,
    storage: { load: (nowMs) => loadPanes(nowMs), write: (records, closed, change, nowMs) => writePanes(records, closed, change, nowMs) },
    channel: openChannel(),
    tabId: Math.random().toString(36).slice(2, 8),
    now: () => Date.now(),
    closePane: (paneId) => void closeSession(paneId),
    dropEngineSession: (engineId) => void getEngineClient().closeSession(engineId).catch(() => undefined),
    notify: (notice) => useStorageNoticeStore.getState().add(notice),
    // read by the e2e specs: wait for saves instead of sleeping
    onPending: (pending, savesDone) => {
      document.documentElement.dataset.panesPending = String(pending);
      document.documentElement.dataset.panesSaves = String(savesDone);
    },
  });
  const current = sync;
  addEventListener('pagehide', () => {
    current.leave();
    void current.save();
  });
  addEventListener('pageshow', (event) => {
    if (event.persisted) current.stay();
  });
  addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') void current.save();
  });
  await current.start();
}
