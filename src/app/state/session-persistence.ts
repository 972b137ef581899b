// Keeps the panes (settings, transcripts) in IndexedDB through idb-keyval, so a reload brings
// them back; restored panes hand their transcript to their next engine session as history.
import { get, set } from 'idb-keyval';
import { fromPersisted, toPersisted } from '../derive/persisted-sessions';
import { useSessionsStore } from './sessions-store';

const KEY = 'cohort-sessions';
/** Streaming changes a pane every frame; a save a little after the last change is enough. */
const SAVE_DELAY_MS = 300;

let started = false;
let timer: ReturnType<typeof setTimeout> | null = null;

function save(): Promise<void> {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  const { order, views, nextNumber, newSettings } = useSessionsStore.getState();
  return set(KEY, toPersisted(order, views, nextNumber, newSettings)).catch((error: unknown) => {
    // Private windows and full disks refuse IndexedDB: the page still works, it just forgets.
    console.warn('could not save sessions', error);
  });
}

/** Reads the saved panes into the store, then saves every later change. Once per page. */
export async function startSessionPersistence(): Promise<void> {
  if (started) return;
  started = true;
  try {
    const restored = fromPersisted(await get(KEY));
    if (restored) useSessionsStore.getState().restore(restored.order, restored.views, restored.nextNumber, restored.newSettings);
  } catch (error) {
    console.warn('could not read saved sessions', error);
  }
  // Subscribed only after the restore, so an empty page never overwrites what was saved.
  useSessionsStore.subscribe((state, previous) => {
    if (state.views === previous.views && state.order === previous.order && state.newSettings === previous.newSettings) return;
    if (timer === null) timer = setTimeout(() => void save(), SAVE_DELAY_MS);
  });
  addEventListener('pagehide', () => void save());
  await save();
}
