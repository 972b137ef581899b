// Zustand store of chat panes: their order, their views (plain mirrors of engine sessions) and
// which engine session backs which pane. Maps are replaced, never mutated. No engine calls here.
import { create } from 'zustand';
import { applyReceivedSteps, DEFAULT_SETTINGS, detachView, newSessionView, suspendView, type NiahMark, type SessionSettings, type SessionView } from '../derive/session-view';
import type { ReceivedStep } from '../derive/step-ring';

export interface NewPaneOptions {
  labelPrefix?: string;
  niah?: NiahMark[];
  tag?: string;
}

interface SessionsState {
  order: readonly string[];
  views: ReadonlyMap<string, SessionView>;
  paneByEngineId: ReadonlyMap<string, string>;
  nextNumber: number;
  /** Settings the toolbar's add buttons use. */
  newSettings: SessionSettings;
  addPanes(settings: readonly SessionSettings[], options?: NewPaneOptions): string[];
  updateView(paneId: string, update: (view: SessionView) => SessionView): void;
  bindEngine(paneId: string, engineId: string): void;
  removePane(paneId: string): void;
  applyRecords(records: readonly ReceivedStep[]): void;
  /** The model was replaced: every pane loses its engine session and history (or, after an
   *  engine restart, keeps its transcript for the next engine session). */
  detachAll(keepTranscripts?: boolean): void;
  setNewSettings(settings: SessionSettings): void;
}

export const useSessionsStore = create<SessionsState>()((set, get) => ({
  order: [],
  views: new Map(),
  paneByEngineId: new Map(),
  nextNumber: 1,
  newSettings: DEFAULT_SETTINGS,

  addPanes(settingsList, options = {}) {
    const { nextNumber, views, order } = get();
    const next = new Map(views);
    const ids: string[] = [];
    settingsList.forEach((settings, i) => {
      const number = nextNumber + i;
      const paneId = `p${number}`;
      const label = `${options.labelPrefix ?? '#'}${options.labelPrefix ? i + 1 : number}`;
      const view = newSessionView(paneId, label, settings);
      next.set(paneId, { ...view, ...(options.niah?.[i] ? { niah: options.niah[i] } : {}), ...(options.tag ? { tag: options.tag } : {}) });
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

  detachAll(keepTranscripts = false) {
    const views = new Map<string, SessionView>();
    for (const [id, view] of get().views) views.set(id, keepTranscripts ? suspendView(view) : detachView(view));
    set({ views, paneByEngineId: new Map() });
  },

  setNewSettings(settings) {
    set({ newSettings: settings });
  },
}));
