// Keeps one tab's panes saved (per-pane records, pane-storage.ts) and in step with the page's other
// tabs (their saves arrive over a channel). No DOM: the page wires it in session-persistence.ts.
import type { StoreApi } from 'zustand';
import {
  contentOf, followOrder, nextRecord, panesFromStorage, remoteDecision, sameContent, viewFromRecord,
  type IndexChange, type PaneRecord,
} from '../derive/pane-records';
import { isBusy, type SessionView } from '../derive/session-view';
import { readSettings, type SessionSettings } from '../derive/session-settings';
import type { Loaded, SetAside, Written } from './pane-storage';
import type { SessionsState } from './sessions-store';

/** A change is saved at most this long after it is made, so a tab killed mid-stream loses at most this much. */
export const SAVE_EVERY_MS = 500;
/** A pane another tab streams into is held busy here until that tab has been silent this long (it crashed). */
export const BUSY_LEASE_MS = 5000;

/** What a tab tells the others after each save. */
export interface PaneMessage {
  from: string;
  records: PaneRecord[];
  closed: string[];
  /** Panes a turn (or a held message) of the sender's runs in. */
  busy: string[];
  /** The panes' order as stored after this save (or the sender's own, storage refused): every tab shows this order. */
  order: string[];
  nextNumber: number;
  newSettings: SessionSettings;
}

export interface PaneStorage {
  load(nowMs: number): Promise<Loaded>;
  write(records: readonly PaneRecord[], closed: readonly string[], change: IndexChange, nowMs: number): Promise<Written>;
}

export interface PaneChannel {
  post(message: PaneMessage): void;
  listen(onMessage: (message: PaneMessage) => void): void;
}

export type StorageNotice = { kind: 'memory'; reason: string } | { kind: 'unreadable'; setAside: SetAside[] };

export interface PaneSyncDeps {
  store: StoreApi<SessionsState>;
  storage: PaneStorage;
  channel: PaneChannel | null;
  tabId: string;
  now(): number;
  /** Closes a pane (closed in another tab) with its engine session. */
  closePane(paneId: string): void;
  /** An engine session whose pane now shows another tab's transcript: its KV no longer matches. */
  dropEngineSession(engineId: string): void;
  notify(notice: StorageNotice): void;
  /** A change waits to be saved (true), or every change so far is saved (false), with the number of saves done. */
  onPending?(pending: boolean, savesDone: number): void;
}

export interface PaneSync {
  /** Reads the saved panes (migrating the old record), then saves every later change. */
  start(): Promise<void>;
  /** Saves now (pagehide); resolves when this and any earlier save are done. */
  save(): Promise<void>;
  /** Says the tab is going: the others stop holding its panes busy. */
  leave(): void;
  /** The tab came back from the back/forward cache: its turns hold their panes again. */
  stay(): void;
  /** Resolves when the saves begun so far are done (tests). */
  settled(): Promise<void>;
}

/**
 * Another tab's record as this tab shows it: a held message stays in the composer of the tab that
 * holds it, so its absence here is no change of this tab's to save over it.
 */
const asShown = (record: PaneRecord): PaneRecord => (record.draft === undefined ? record : { ...record, draft: undefined });
const errorText = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
/** The pane runs a turn or holds a message of this tab's own. */
const busyHere = (view: SessionView): boolean => isBusy({ ...view, busyElsewhere: false });

export function createPaneSync(deps: PaneSyncDeps): PaneSync {
  const { store } = deps;
  /** Each pane's last record this tab saved or took from another tab: the base of its next save. */
  const known = new Map<string, PaneRecord>();
  /** Panes closed in any tab: never shown or saved again here. */
  const closedHere = new Set<string>();
  /** Panes another tab said it streams into, with the timer that ends the hold if it goes silent. */
  const heldBy = new Map<string, { from: string; timer: ReturnType<typeof setTimeout> }>();
  let storageWorks = true;
  let leaving = false;
  let toldMemory = false;
  let lastIndex = '';
  let lastBusy = '';
  let timer: ReturnType<typeof setTimeout> | null = null;
  let chain: Promise<void> = Promise.resolve();

  let savesDone = 0;
  const schedule = () => {
    if (timer !== null) return;
    timer = setTimeout(() => void save(), SAVE_EVERY_MS);
    deps.onPending?.(true, savesDone);
  };

  const refuse = (error: unknown) => {
    storageWorks = false;
    if (toldMemory) return;
    toldMemory = true;
    deps.notify({ kind: 'memory', reason: errorText(error) });
  };

  const setBusyElsewhere = (paneId: string, busy: boolean) =>
    store.getState().updateView(paneId, (v) => (Boolean(v.busyElsewhere) === busy ? v : busy ? { ...v, busyElsewhere: true } : { ...v, busyElsewhere: undefined }));

  const release = (paneId: string) => {
    const hold = heldBy.get(paneId);
    if (!hold) return;
    clearTimeout(hold.timer);
    heldBy.delete(paneId);
    setBusyElsewhere(paneId, false);
  };

  /** Shows another tab's record in a pane this tab has (the draft of a held message stays in that tab). */
  function adopt(local: SessionView, record: PaneRecord): void {
    const shown = asShown(record);
    known.set(record.paneId, shown);
    if (sameContent(contentOf(local), shown)) return;
    const view: SessionView = { ...viewFromRecord(shown), ...(local.busyElsewhere ? { busyElsewhere: true } : {}) };
    if (local.engineId) {
      store.getState().unbindEngine(record.paneId);
      deps.dropEngineSession(local.engineId);
    }
    store.getState().updateView(record.paneId, () => view);
  }

  /** Messages that came while the saved panes were read: applied after them, so the order stays the stored one. */
  let early: PaneMessage[] | null = [];

  function receive(message: PaneMessage): void {
    if (message.from === deps.tabId) return;
    if (early) {
      early.push(message);
      return;
    }
    for (const id of message.closed) {
      closedHere.add(id);
      known.delete(id);
      release(id);
      if (store.getState().views.has(id)) deps.closePane(id);
    }
    const added: PaneRecord[] = [];
    for (const record of message.records) {
      // closed here, the close not saved yet: the other tab's copy must not bring it back
      if (closedHere.has(record.paneId) || (known.has(record.paneId) && !store.getState().views.has(record.paneId))) continue;
      const local = store.getState().views.get(record.paneId);
      if (remoteDecision(local, known.get(record.paneId), record) === 'keep') continue;
      if (local) adopt(local, record);
      else {
        known.set(record.paneId, asShown(record));
        added.push(record);
      }
    }
    if (added.length > 0) {
      const views = new Map(added.map((r) => [r.paneId, viewFromRecord(asShown(r))]));
      store.getState().restore(added.map((r) => r.paneId), views, message.nextNumber, readSettings(message.newSettings));
    }
    store.getState().raiseNextNumber(message.nextNumber);
    store.getState().setOrder(followOrder(store.getState().order, message.order));
    for (const [id, hold] of heldBy) if (hold.from === message.from && !message.busy.includes(id)) release(id);
    for (const id of message.busy) {
      const view = store.getState().views.get(id);
      if (!view || busyHere(view)) continue;
      clearTimeout(heldBy.get(id)?.timer);
      heldBy.set(id, { from: message.from, timer: setTimeout(() => release(id), BUSY_LEASE_MS) });
      setBusyElsewhere(id, true);
    }
  }

  /** For each pane, the pane holding the other tab's copy after they went apart (one, updated, however often they clash). */
  const forkOf = new Map<string, string>();

  /**
   * Two tabs changed a pane apart; both copies are kept. A pane this tab streams into keeps its
   * id and the stored copy becomes a pane after it; otherwise this tab's copy moves to the new
   * pane and the pane shows the stored one (as in the tabs that wrote it).
   */
  function fork(mine: PaneRecord, stored: PaneRecord): void {
    const state = store.getState();
    const local = state.views.get(mine.paneId);
    if (!local) return;
    const label = (of: string) => `#${state.nextNumber} (apart from ${of})`;
    if (busyHere(local)) {
      // the stored rev becomes this tab's base: the next save puts the stream on top of it
      known.set(mine.paneId, stored);
      const earlier = forkOf.get(mine.paneId);
      const copy = viewFromRecord(asShown(stored));
      if (earlier && state.views.has(earlier)) state.updateView(earlier, (v) => ({ ...copy, paneId: earlier, label: v.label }));
      else {
        const newId = `p${state.nextNumber}${state.paneIdSuffix}`;
        forkOf.set(mine.paneId, newId);
        state.insertPaneAfter(mine.paneId, { ...copy, paneId: newId, label: label(stored.label) });
      }
    } else {
      const shown = asShown(stored);
      known.set(stored.paneId, shown);
      state.forkPane(mine.paneId, `p${state.nextNumber}${state.paneIdSuffix}`, label(mine.label), viewFromRecord(shown));
    }
    store.getState().raiseNextNumber(state.nextNumber + 1);
  }

  async function saveNow(): Promise<void> {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const state = store.getState();
    const nowMs = deps.now();
    const order = state.order.filter((id) => state.views.get(id)?.tag === undefined);
    const records: PaneRecord[] = [];
    for (const id of order) {
      const record = nextRecord(id, contentOf(state.views.get(id)!), known.get(id), nowMs);
      if (record) records.push(record);
    }
    const closed = [...known.keys()].filter((id) => !state.views.has(id));
    // a tab that is going holds no pane busy for the others, whatever still runs in it
    const busy = leaving ? [] : order.filter((id) => busyHere(state.views.get(id)!));
    const change: IndexChange = { order, closed, nextNumber: state.nextNumber, newSettings: state.newSettings };
    const indexText = JSON.stringify({ order, nextNumber: state.nextNumber, newSettings: state.newSettings });
    const busyText = busy.join(' ');
    // a tab streaming into a pane says so again each interval, even while no token comes
    if (busy.length > 0) schedule();
    if (records.length === 0 && closed.length === 0 && indexText === lastIndex && (busyText === lastBusy && busy.length === 0)) return;
    for (const id of closed) {
      known.delete(id);
      closedHere.add(id);
    }
    let sent = records;
    let storedOrder = order;
    if (storageWorks && (records.length > 0 || closed.length > 0 || indexText !== lastIndex)) {
      try {
        const written = await deps.storage.write(records, closed, change, nowMs);
        sent = written.written;
        storedOrder = written.index.order;
        for (const record of written.written) known.set(record.paneId, record);
        for (const id of written.closedElsewhere) {
          closedHere.add(id);
          known.delete(id);
          deps.closePane(id);
        }
        for (const { mine, stored } of written.conflicts) fork(mine, stored);
        if (written.conflicts.length > 0) schedule();
        if (written.setAside.length > 0) deps.notify({ kind: 'unreadable', setAside: written.setAside });
      } catch (error) {
        refuse(error);
      }
    }
    // kept in memory (and in the other tabs) when storage refuses
    if (!storageWorks) for (const record of records) known.set(record.paneId, record);
    lastIndex = indexText;
    lastBusy = busyText;
    deps.channel?.post({ from: deps.tabId, records: sent, closed, busy, order: storedOrder, nextNumber: state.nextNumber, newSettings: state.newSettings });
  }

  function save(): Promise<void> {
    const settle = () => deps.onPending?.(timer !== null, ++savesDone);
    chain = chain.then(saveNow, saveNow).then(settle);
    return chain;
  }

  async function start(): Promise<void> {
    store.setState({ paneIdSuffix: `-${deps.tabId}` });
    deps.channel?.listen(receive);
    try {
      const loaded = await deps.storage.load(deps.now());
      for (const id of Object.keys(loaded.index.closed)) closedHere.add(id);
      const restored = panesFromStorage(loaded.index, loaded.records);
      for (const record of loaded.records) if (restored.views.has(record.paneId) && !known.has(record.paneId)) known.set(record.paneId, record);
      store.getState().restore(restored.order, restored.views, restored.nextNumber, restored.newSettings);
      if (loaded.setAside.length > 0) deps.notify({ kind: 'unreadable', setAside: loaded.setAside });
    } catch (error) {
      refuse(error);
    }
    const waiting = early ?? [];
    early = null;
    for (const message of waiting) receive(message);
    // subscribed only after the restore, so an empty page never saves over what was saved
    store.subscribe((s, previous) => {
      if (s.views !== previous.views || s.order !== previous.order || s.newSettings !== previous.newSettings || s.nextNumber !== previous.nextNumber) schedule();
    });
    await save();
  }

  function leave(): void {
    leaving = true;
    deps.channel?.post({ from: deps.tabId, records: [], closed: [], busy: [], order: store.getState().order.filter((id) => !store.getState().views.get(id)?.tag), nextNumber: store.getState().nextNumber, newSettings: store.getState().newSettings });
  }

  function stay(): void {
    leaving = false;
    schedule();
  }

  return { start, save, leave, stay, settled: () => chain };
}
