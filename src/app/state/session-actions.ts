// What the pane buttons do: open panes, send (creating the engine session with the pane's
// settings on first use, or after they changed; held while a model loads), cancel, reset, close.
// Store updates first, then the worker call.
import type { TurnResult } from '../../protocol/events';
import { getEngineClient } from '../engine-client';
import { beginTurn, changeSettings, failTurn, historyBeforeTurn, isBusy, lastUserLine, markCancelling, refuseTurn, resetView, rewindView } from '../derive/session-view';
import { toSessionOptions, type SessionSettings } from '../derive/session-settings';
import { errorMessage } from '../derive/error-message';
import { heldInOrder, holdForModel, releaseHeld, returnHeld } from '../derive/held-message';
import { composerDrafts } from './composer-drafts';
import { modelIsComing, useModelStore } from './model-store';
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

/**
 * Settles the sendMessage call of each pane holding a message: true once it went to the engine,
 * false when it was handed back or dropped. Functions, so kept here rather than in the store.
 */
const heldSends = new Map<string, (sent: boolean) => void>();

function settleHeld(paneId: string, sent: boolean): void {
  const settle = heldSends.get(paneId);
  heldSends.delete(paneId);
  settle?.(sent);
}

/**
 * Sends a user message. While a model loads, the pane holds it (shown as waiting for the model)
 * and the promise settles when the load ends. False when the pane cannot take one now, or the
 * held message was handed back or dropped.
 */
export async function sendMessage(paneId: string, text: string): Promise<boolean> {
  const store = useSessionsStore.getState();
  const view = store.views.get(paneId);
  if (!view || isBusy(view) || text.trim() === '') return false;
  if (modelIsComing(useModelStore.getState())) {
    // The load ends every engine session: a turn begun now would be cut off, so it waits.
    store.updateView(paneId, (v) => holdForModel(v, text, performance.now()));
    return new Promise<boolean>((resolve) => heldSends.set(paneId, resolve));
  }
  if (!useModelStore.getState().model) {
    store.updateView(paneId, (v) => ({ ...failTurn(v, 'No model is loaded yet.'), returnedDraft: text }));
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

/**
 * A load ended well: every held message goes to the engine, oldest first, one send after the
 * other so the engine sees them in that order. A pane closed or cancelled meanwhile sends nothing.
 */
export async function sendHeldMessages(): Promise<void> {
  const { order, views } = useSessionsStore.getState();
  for (const paneId of heldInOrder(order, views)) {
    const held = useSessionsStore.getState().views.get(paneId)?.waitingForModel;
    if (!held) continue;
    const settle = heldSends.get(paneId);
    heldSends.delete(paneId);
    useSessionsStore.getState().updateView(paneId, releaseHeld);
    const sent = await sendMessage(paneId, held.text);
    settle?.(sent);
  }
}

/** A load failed (or the engine could not start): held messages go back to their composers with the reason. */
export function returnHeldMessages(reason: string): void {
  const { order, views } = useSessionsStore.getState();
  for (const paneId of heldInOrder(order, views)) {
    useSessionsStore.getState().updateView(paneId, (v) => returnHeld(v, reason));
    settleHeld(paneId, false);
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
  if (!view || isBusy(view) || view.lines[lineIndex]?.role !== 'user') return null;
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

/** Cancels every running turn and drops every message waiting for the model. */
export async function stopAll(): Promise<void> {
  const { order, views } = useSessionsStore.getState();
  await Promise.all(order.filter((id) => { const v = views.get(id); return v && isBusy(v); }).map(cancelTurn));
}

/** The full result of the pane's current (or last) turn, from the engine. */
export async function waitForTurn(paneId: string): Promise<TurnResult> {
  const engineId = useSessionsStore.getState().views.get(paneId)?.engineId;
  if (!engineId) throw new Error(`pane ${paneId} has no engine session`);
  return getEngineClient().waitForTurn(engineId);
}

/**
 * The pane says "cancelling…" at once; the engine ends the turn at its next step boundary. A
 * message waiting for the model is dropped: nothing was sent, so the pane is as it was before.
 */
export async function cancelTurn(paneId: string): Promise<void> {
  const view = useSessionsStore.getState().views.get(paneId);
  if (view?.waitingForModel) {
    useSessionsStore.getState().updateView(paneId, releaseHeld);
    settleHeld(paneId, false);
    return;
  }
  const engineId = view?.engineId;
  if (!engineId) return;
  useSessionsStore.getState().updateView(paneId, markCancelling);
  await getEngineClient().cancel(engineId).catch(() => undefined);
}

export async function resetSession(paneId: string): Promise<void> {
  const view = useSessionsStore.getState().views.get(paneId);
  if (!view) return;
  useSessionsStore.getState().updateView(paneId, resetView);
  settleHeld(paneId, false);
  if (view.engineId) await getEngineClient().resetSession(view.engineId).catch(() => undefined);
}

export async function closeSession(paneId: string): Promise<void> {
  const view = useSessionsStore.getState().views.get(paneId);
  useSessionsStore.getState().removePane(paneId);
  composerDrafts.forget(paneId);
  settleHeld(paneId, false);
  if (view?.engineId) await getEngineClient().closeSession(view.engineId).catch(() => undefined);
}

export async function closeAllSessions(): Promise<void> {
  await Promise.all(useSessionsStore.getState().order.map(closeSession));
}
