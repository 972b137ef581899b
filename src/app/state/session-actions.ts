// What the pane buttons do: open panes, send (creating the engine session with the pane's
// settings on first use, or after they changed), cancel, reset, close. Store updates first, then the worker call.
import type { TurnResult } from '../../protocol/events';
import { getEngineClient } from '../engine-client';
import { beginTurn, changeSettings, failTurn, historyBeforeTurn, isActive, lastUserLine, markCancelling, refuseTurn, resetView, rewindView, toSessionOptions, type SessionSettings } from '../derive/session-view';
import { errorMessage } from './model-actions';
import { useModelStore } from './model-store';
import { useSessionsStore, type NewPaneOptions } from './sessions-store';

export function addSessions(count: number, settings?: SessionSettings, options?: NewPaneOptions): string[] {
  const store = useSessionsStore.getState();
  const n = Math.max(1, Math.min(64, Math.floor(count)));
  return store.addPanes(Array.from({ length: n }, () => settings ?? store.newSettings), options);
}

/** New settings for the pane's next turn; an engine session made with the old ones is closed. */
export function updateSettings(paneId: string, settings: SessionSettings): void {
  const store = useSessionsStore.getState();
  const view = store.views.get(paneId);
  if (!view || changeSettings(view, settings) === view) return;
  if (view.engineId) store.unbindEngine(paneId);
  store.updateView(paneId, (v) => changeSettings(v, settings));
  if (view.engineId) void getEngineClient().closeSession(view.engineId).catch(() => undefined);
}

/** The engine session behind a pane, created with the pane's settings the first time. */
async function ensureEngineSession(paneId: string): Promise<string> {
  const view = useSessionsStore.getState().views.get(paneId);
  if (!view) throw new Error(`pane ${paneId} is closed`);
  if (view.engineId) return view.engineId;
  const history = view.restoreHistory ? historyBeforeTurn(view) : [];
  const engineId = await getEngineClient().createSession({ ...toSessionOptions(view.settings), ...(history.length > 0 ? { history } : {}) });
  useSessionsStore.getState().bindEngine(paneId, engineId);
  useSessionsStore.getState().updateView(paneId, (v) => (v.restoreHistory ? { ...v, restoreHistory: false } : v));
  return engineId;
}

/** Sends a user message; false when the pane cannot take one now. */
export async function sendMessage(paneId: string, text: string): Promise<boolean> {
  const store = useSessionsStore.getState();
  const view = store.views.get(paneId);
  if (!view || isActive(view) || text.trim() === '') return false;
  if (!useModelStore.getState().model) {
    store.updateView(paneId, (v) => ({ ...failTurn(v, 'No model is loaded yet.'), returnedDraft: text }));
    return false;
  }
  const loading = useModelStore.getState().loading;
  if (loading) {
    // The load ends every engine session: a turn begun now would be cut off.
    store.updateView(paneId, (v) => ({ ...failTurn(v, `${loading.label} is loading: send again when it is ready.`), returnedDraft: text }));
    return false;
  }
  store.updateView(paneId, (v) => beginTurn(v, text, performance.now()));
  try {
    const engineId = await ensureEngineSession(paneId);
    await getEngineClient().send(engineId, text);
    return true;
  } catch (error) {
    useSessionsStore.getState().updateView(paneId, (v) => refuseTurn(v, errorMessage(error)));
    return false;
  }
}

/** The composer took back a refused message. */
export function takeReturnedDraft(paneId: string): void {
  useSessionsStore.getState().updateView(paneId, (v) => (v.returnedDraft === undefined ? v : { ...v, returnedDraft: undefined }));
}

/**
 * Drops the transcript from the user line at lineIndex on, and the engine session with it (its
 * KV holds the dropped turns); the next send starts a new one with the lines that remain.
 */
async function rewind(paneId: string, lineIndex: number): Promise<string | null> {
  const view = useSessionsStore.getState().views.get(paneId);
  if (!view || isActive(view) || view.lines[lineIndex]?.role !== 'user') return null;
  const text = view.lines[lineIndex].text;
  useSessionsStore.getState().unbindEngine(paneId);
  useSessionsStore.getState().updateView(paneId, (v) => rewindView(v, lineIndex));
  if (view.engineId) await getEngineClient().closeSession(view.engineId).catch(() => undefined);
  return text;
}

/** A new answer to the last user message. */
export async function regenerate(paneId: string): Promise<boolean> {
  const view = useSessionsStore.getState().views.get(paneId);
  const text = view ? await rewind(paneId, lastUserLine(view)) : null;
  return text === null ? false : sendMessage(paneId, text);
}

/** Takes the user message at lineIndex (and all after it) back into the composer to edit. */
export async function editMessage(paneId: string, lineIndex: number): Promise<void> {
  const text = await rewind(paneId, lineIndex);
  if (text !== null) useSessionsStore.getState().updateView(paneId, (v) => ({ ...v, returnedDraft: text }));
}

export async function stopAll(): Promise<void> {
  const { order, views } = useSessionsStore.getState();
  await Promise.all(order.filter((id) => { const v = views.get(id); return v && isActive(v); }).map(cancelTurn));
}

/** The full result of the pane's current (or last) turn, from the engine. */
export async function waitForTurn(paneId: string): Promise<TurnResult> {
  const engineId = useSessionsStore.getState().views.get(paneId)?.engineId;
  if (!engineId) throw new Error(`pane ${paneId} has no engine session`);
  return getEngineClient().waitForTurn(engineId);
}

/** The pane says "cancelling…" at once; the engine ends the turn at its next step boundary. */
export async function cancelTurn(paneId: string): Promise<void> {
  const engineId = useSessionsStore.getState().views.get(paneId)?.engineId;
  if (!engineId) return;
  useSessionsStore.getState().updateView(paneId, markCancelling);
  await getEngineClient().cancel(engineId).catch(() => undefined);
}

export async function resetSession(paneId: string): Promise<void> {
  const view = useSessionsStore.getState().views.get(paneId);
  if (!view) return;
  useSessionsStore.getState().updateView(paneId, resetView);
  if (view.engineId) await getEngineClient().resetSession(view.engineId).catch(() => undefined);
}

export async function closeSession(paneId: string): Promise<void> {
  const view = useSessionsStore.getState().views.get(paneId);
  useSessionsStore.getState().removePane(paneId);
  if (view?.engineId) await getEngineClient().closeSession(view.engineId).catch(() => undefined);
}

export async function closeAllSessions(): Promise<void> {
  await Promise.all(useSessionsStore.getState().order.map(closeSession));
}
