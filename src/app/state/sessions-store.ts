// Zustand store of chat panes: their order, their views (plain mirrors of engine sessions) and
// which engine session backs which pane. Maps are replaced, never mutated. No engine calls here.
import { create, type StateCreator } from 'zustand';
import { applyReceivedSteps, newSessionView, suspendView, type NiahMark, type SessionView } from '../derive/session-view';
import { DEFAULT_SETTINGS, type SessionSettings } from '../derive/session-settings';
import type { ReceivedStep } from '../derive/step-ring';
import type { ExtractMark } from '../derive/extract-plan';

export interface NewPaneOptions {
  labelPrefix?: string;
  niah?: NiahMark[];
  extract?: ExtractMark[];
  tag?: string;
}

export interface SessionsState {
  order: readonly string[];
  views: ReadonlyMap<string, SessionView>;
  paneByEngineId: ReadonlyMap<string, string>;
  nextNumber: number;
  /** Appended to new pane ids (`p3-<tab>`), so panes opened in two tabs at once never share an id. */
  paneIdSuffix: string;
  /** Settings the toolbar's add buttons use. */
  newSettings: SessionSettings;
  /** A pane whose composer should take the keyboard focus (a pane just added). */
  focusPaneId: string | null;
  requestFocus(paneId: string | null): void;
  addPanes(settings: readonly SessionSettings[], options?: NewPaneOptions): string[];
  updateView(paneId: string, update: (view: SessionView) => SessionView): void;
  bindEngine(paneId: string, engineId: string): void;
  removePane(paneId: string): void;
  applyRecords(records: readonly ReceivedStep[]): void;
  /** The engine sessions are gone (a new model, an engine restart): every pane keeps its
   *  transcript for its next engine session; a turn cut off ends with cutMessage. */
  detachAll(cutMessage?: string): void;
  /** The pane's engine session is dropped (rewinds); its next send creates a new one. */
  unbindEngine(paneId: string): void;
  /** Panes saved before a reload: added after any opened since the page started. */
  restore(order: readonly string[], views: ReadonlyMap<string, SessionView>, nextNumber: number, newSettings: SessionSettings): void;
  setNewSettings(settings: SessionSettings): void;
  /** Another tab numbered panes up to here: labels go on from the highest. */
  raiseNextNumber(nextNumber: number): void;
  /**
   * Two tabs changed one pane apart: this tab's copy (with its engine session, perhaps still
   * streaming) moves to a new pane right after it, and the pane shows the stored copy.
   */
  forkPane(paneId: string, newId: string, newLabel: string, stored: SessionView): void;
  /** A pane (with no engine session) placed right after another. */
  insertPaneAfter(paneId: string, view: SessionView): void;
  /** The same panes in another order (another tab's); unchanged when equal. */
  setOrder(order: readonly string[]): void;
}

/** The store's state and actions; the page's store is useSessionsStore (tests make their own). */
export const sessionsState: StateCreator<SessionsState> = (set, get) => ({
  order: [],
  views: new Map(),
  paneByEngineId: new Map(),
  nextNumber: 1,
  paneIdSuffix: '',
  newSettings: DEFAULT_SETTINGS,
  focusPaneId: null,

  addPanes(settingsList, options = {}) {
    const { nextNumber, views, order, paneIdSuffix } = get();
    const next = new Map(views);
    const ids: string[] = [];
    settingsList.forEach((settings, i) => {
      const number = nextNumber + i;
      const paneId = `p${number}${paneIdSuffix}`;
      const label = `${options.labelPrefix ?? '#'}${options.labelPrefix ? i + 1 : number}`;
      const view = newSessionView(paneId, label, settings);
      next.set(paneId, { ...view, ...(options.niah?.[i] ? { niah: options.niah[i] } : {}), ...(options.extract?.[i] ? { extract: options.extract[i] } : {}), ...(options.tag ? { tag: options.tag } : {}) });
      ids.push(paneId);
    });
    set({ views: next, order: [...order, ...ids], nextNumber: nextNumber + settingsList.length });
    return ids;
  },

  updateView(paneId, update) {
    const view = get().views.get(paneId);
    if (!view) return;
    const updated = update(view);
    if (updated === view) return;
    set({ views: new Map(get().views).set(paneId, updated) });
  },

  bindEngine(paneId, engineId) {
    const { views, paneByEngineId } = get();
    const view = views.get(paneId);
    if (!view) return;
    set({
      views: new Map(views).set(paneId, { ...view, engineId }),
      paneByEngineId: new Map(paneByEngineId).set(engineId, paneId),
    });
  },

  removePane(paneId) {
    const { views, order, paneByEngineId } = get();
    const view = views.get(paneId);
    if (!view) return;
    const nextViews = new Map(views);
    nextViews.delete(paneId);
    const nextBindings = new Map(paneByEngineId);
    if (view.engineId) nextBindings.delete(view.engineId);
    set({ views: nextViews, order: order.filter((id) => id !== paneId), paneByEngineId: nextBindings });
  },

  applyRecords(records) {
    const { views, paneByEngineId } = get();
    const next = applyReceivedSteps(views, paneByEngineId, records);
    if (next !== views) set({ views: next });
  },

  detachAll(cutMessage) {
    const views = new Map<string, SessionView>();
    for (const [id, view] of get().views) views.set(id, suspendView(view, cutMessage));
    set({ views, paneByEngineId: new Map() });
  },

  unbindEngine(paneId) {
    const { views, paneByEngineId } = get();
    const view = views.get(paneId);
    if (!view?.engineId) return;
    const { engineId, ...rest } = view;
    const bindings = new Map(paneByEngineId);
    bindings.delete(engineId);
    set({ views: new Map(views).set(paneId, rest), paneByEngineId: bindings });
  },

  restore(restoredOrder, restoredViews, restoredNext, newSettings) {
    const { order, views, nextNumber } = get();
    const next = new Map(views);
    const added: string[] = [];
    for (const id of restoredOrder) {
      const view = restoredViews.get(id);
      if (!view || next.has(id)) continue;
      next.set(id, view);
      added.push(id);
    }
    // Panes opened before the saved ones arrived keep their place; restored ones follow.
    set({ views: next, order: [...order, ...added], nextNumber: Math.max(nextNumber, restoredNext), ...(order.length === 0 ? { newSettings } : {}) });
  },

  requestFocus(paneId) {
    set({ focusPaneId: paneId });
  },

  setNewSettings(settings) {
    set({ newSettings: settings });
  },

  raiseNextNumber(nextNumber) {
    if (nextNumber > get().nextNumber) set({ nextNumber });
  },

  forkPane(paneId, newId, newLabel, stored) {
    const { views, order, paneByEngineId } = get();
    const mine = views.get(paneId);
    if (!mine || views.has(newId)) return;
    const nextViews = new Map(views).set(paneId, stored).set(newId, { ...mine, paneId: newId, label: newLabel });
    const at = order.indexOf(paneId);
    const bindings = new Map(paneByEngineId);
    if (mine.engineId) bindings.set(mine.engineId, newId);
    set({ views: nextViews, order: [...order.slice(0, at + 1), newId, ...order.slice(at + 1)], paneByEngineId: bindings });
  },

  setOrder(order) {
    if (order !== get().order) set({ order });
  },

  insertPaneAfter(paneId, view) {
    const { views, order } = get();
    if (views.has(view.paneId)) return;
    const at = order.indexOf(paneId);
    set({ views: new Map(views).set(view.paneId, view), order: at < 0 ? [...order, view.paneId] : [...order.slice(0, at + 1), view.paneId, ...order.slice(at + 1)] });
  },
});

export const useSessionsStore = create<SessionsState>()(sessionsState);
