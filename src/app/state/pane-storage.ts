// The per-pane records in IndexedDB (idb-keyval's store, where the version-1 record lived): one
// transaction per load and per save, so tabs never interleave halves of a change. Rules: derive/pane-records.ts.
import { createStore, promisifyRequest, type UseStore } from 'idb-keyval';
import {
  asideKey, decideWrite, emptyIndex, INDEX_KEY, isUnreadable, LEGACY_KEY, mergeIndex, migrateLegacy, PANE_KEY_PREFIX, paneKey, readIndex, readPaneRecord,
  type IndexChange, type PaneIndex, type PaneRecord,
} from '../derive/pane-records';
import { DEFAULT_SETTINGS } from '../derive/session-settings';

/** A value this page could not read, moved whole to `asideKey` (never overwritten). */
export interface SetAside {
  key: string;
  asideKey: string;
  why: string;
}

export interface Loaded {
  index: PaneIndex;
  records: PaneRecord[];
  setAside: SetAside[];
  /** Panes taken from the version-1 record. */
  migrated: number;
}

export interface Written {
  index: PaneIndex;
  /** Records as stored (a write on top of a newer copy gets the next rev). */
  written: PaneRecord[];
  /** Panes closed in some tab: this tab should close them too. */
  closedElsewhere: string[];
  /** Panes another tab changed meanwhile; the stored copy was kept. */
  conflicts: Array<{ mine: PaneRecord; stored: PaneRecord }>;
  setAside: SetAside[];
}

const PANE_RANGE = (): IDBKeyRange => IDBKeyRange.bound(PANE_KEY_PREFIX, `${PANE_KEY_PREFIX}\uffff`);

let defaultStore: UseStore | undefined;
/** The same database and object store idb-keyval uses by default, where the version-1 record is. */
const paneStore = (): UseStore => (defaultStore ??= createStore('keyval-store', 'keyval'));

/** Runs `body` in one transaction and resolves once it committed (rejects if it aborted: quota, refusal). */
function inTransaction<T>(mode: IDBTransactionMode, body: (store: IDBObjectStore) => Promise<T>, useStore: UseStore): Promise<T> {
  return useStore(mode, async (store) => {
    const done = promisifyRequest(store.transaction);
    const result = await body(store);
    await done;
    return result;
  });
}

const request = <T>(r: IDBRequest<T>): Promise<T> => promisifyRequest(r);

function moveAside(store: IDBObjectStore, key: string, value: unknown, why: string, nowMs: number): SetAside {
  const aside = asideKey(key, nowMs);
  store.put(value, aside);
  store.delete(key);
  return { key, asideKey: aside, why };
}

/** The stored index, or one rebuilt from the records' keys when there is none or it is unreadable (moved aside). */
async function readStoredIndex(store: IDBObjectStore, nowMs: number, setAside: SetAside[]): Promise<{ index: PaneIndex; found: boolean }> {
  const raw = await request(store.get(INDEX_KEY));
  if (raw === undefined) return { index: emptyIndex(DEFAULT_SETTINGS), found: false };
  const index = readIndex(raw);
  if (!isUnreadable(index)) return { index, found: true };
  setAside.push(moveAside(store, INDEX_KEY, raw, index.unreadable, nowMs));
  return { index: emptyIndex(DEFAULT_SETTINGS), found: false };
}

/**
 * Every saved pane. Unreadable records (a newer page's, damaged ones) are moved aside; the
 * version-1 record, if any, is migrated into records in the same transaction and then deleted.
 */
export function loadPanes(nowMs: number, useStore: UseStore = paneStore()): Promise<Loaded> {
  return inTransaction('readwrite', async (store) => {
    const setAside: SetAside[] = [];
    const [legacy, keys, values] = await Promise.all([request(store.get(LEGACY_KEY)), request(store.getAllKeys(PANE_RANGE())), request(store.getAll(PANE_RANGE()))]);
    let { index, found } = await readStoredIndex(store, nowMs, setAside);
    const records = new Map<string, PaneRecord>();
    keys.forEach((key, i) => {
      const parsed = readPaneRecord(values[i]);
      if (isUnreadable(parsed) || paneKey(parsed.paneId) !== key) setAside.push(moveAside(store, String(key), values[i], isUnreadable(parsed) ? parsed.unreadable : 'damaged (stored under another key)', nowMs));
      else records.set(parsed.paneId, parsed);
    });
    let migrated = 0;
    if (legacy !== undefined) {
      const fromLegacy = migrateLegacy(legacy, index, records, nowMs);
      if (fromLegacy) {
        for (const record of fromLegacy.records) {
          store.put(record, paneKey(record.paneId));
          records.set(record.paneId, record);
        }
        migrated = fromLegacy.records.length;
        index = fromLegacy.index;
        store.delete(LEGACY_KEY);
        found = false;
      } else setAside.push(moveAside(store, LEGACY_KEY, legacy, 'saved by another version of the page, or damaged', nowMs));
    }
    if (!found) store.put(index, INDEX_KEY);
    return { index, records: [...records.values()], setAside, migrated };
  }, useStore);
}

/**
 * One tab's save: its changed panes, the ones it closed and its view of the index, merged with
 * whatever other tabs stored, in one transaction (decideWrite, mergeIndex).
 */
export function writePanes(records: readonly PaneRecord[], closed: readonly string[], change: IndexChange, nowMs: number, useStore: UseStore = paneStore()): Promise<Written> {
  return inTransaction('readwrite', async (store) => {
    const setAside: SetAside[] = [];
    const { index: storedIndex } = await readStoredIndex(store, nowMs, setAside);
    const storedRaw = await Promise.all(records.map((r) => request(store.get(paneKey(r.paneId)))));
    const index = mergeIndex(storedIndex, change, nowMs);
    const result: Written = { index, written: [], closedElsewhere: [], conflicts: [], setAside };
    records.forEach((mine, i) => {
      const raw = storedRaw[i];
      let stored: PaneRecord | undefined;
      if (raw !== undefined) {
        const parsed = readPaneRecord(raw);
        if (isUnreadable(parsed)) setAside.push(moveAside(store, paneKey(mine.paneId), raw, parsed.unreadable, nowMs));
        else stored = parsed;
      }
      const decision = decideWrite(stored, index.closed[mine.paneId], mine);
      if (decision.kind === 'put') {
        store.put(decision.record, paneKey(mine.paneId));
        result.written.push(decision.record);
      } else if (decision.kind === 'same') result.written.push(decision.stored);
      else if (decision.kind === 'closed') result.closedElsewhere.push(mine.paneId);
      else result.conflicts.push({ mine, stored: decision.stored });
    });
    for (const id of closed) store.delete(paneKey(id));
    store.put(index, INDEX_KEY);
    return result;
  }, useStore);
}
