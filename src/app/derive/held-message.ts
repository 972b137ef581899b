// A message sent while a model loads: held in its pane (one per pane; the composer is closed
// meanwhile), then released to the engine or handed back to the composer. Pure, no store.
import type { SessionView } from './session-view';
import { failTurn, isBusy } from './session-view';

/** The pane keeps the message until the load ends; a busy pane is left as it is. */
export function holdForModel(view: SessionView, text: string, nowMs: number): SessionView {
  if (isBusy(view) || text.trim() === '') return view;
  return { ...view, waitingForModel: { text, heldAtMs: nowMs }, error: undefined };
}

/** The pane without its held message (the load ended well: it is sent now; or it was cancelled). */
export function releaseHeld(view: SessionView): SessionView {
  if (view.waitingForModel === undefined) return view;
  const { waitingForModel: _released, ...rest } = view;
  return rest;
}

/** The load failed: the held message goes back to the composer, with the load's reason shown. */
export function returnHeld(view: SessionView, reason: string): SessionView {
  const held = view.waitingForModel;
  if (held === undefined) return view;
  return { ...failTurn(releaseHeld(view), reason), returnedDraft: held.text };
}

/** Panes holding a message, oldest message first (ties keep the panes' order). */
export function heldInOrder(order: readonly string[], views: ReadonlyMap<string, SessionView>): string[] {
  const held = order.filter((id) => views.get(id)?.waitingForModel !== undefined);
  const at = (id: string) => views.get(id)!.waitingForModel!.heldAtMs;
  return held.sort((a, b) => at(a) - at(b));
}
