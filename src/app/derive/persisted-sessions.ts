// The first saved shape (version 1: every pane in one record), read when a page migrates it, and
// the lines reader the per-pane records share (settings: session-settings.ts). Pure; the records: pane-records.ts.
import { readSettings, type SessionSettings } from './session-settings';
import { newSessionView, type ChatLine, type SessionView } from './session-view';

/** Bumped when the saved shape changes; an unknown version is ignored rather than misread. */
export const PERSIST_VERSION = 1;

export interface PersistedPane {
  paneId: string;
  label: string;
  settings: SessionSettings;
  lines: ChatLine[];
  /** A message that was waiting for the model: back in the composer after the reload. */
  draft?: string;
}

export interface PersistedSessions {
  version: typeof PERSIST_VERSION;
  panes: PersistedPane[];
  nextNumber: number;
  newSettings: SessionSettings;
}

/**
 * The version-1 record as pages before per-pane records wrote it (the panes a person opened, not
 * compare runs' temporary ones). The page no longer writes it; tests build old records with it.
 */
export function toPersisted(order: readonly string[], views: ReadonlyMap<string, SessionView>, nextNumber: number, newSettings: SessionSettings): PersistedSessions {
  const panes: PersistedPane[] = [];
  for (const id of order) {
    const view = views.get(id);
    if (!view || view.tag) continue;
    // A reply still streaming is saved as far as it got; an empty one is not a line worth keeping.
    const lines = view.lines.filter((line) => line.text !== '');
    panes.push({ paneId: view.paneId, label: view.label, settings: view.settings, lines, ...(view.waitingForModel ? { draft: view.waitingForModel.text } : {}) });
  }
  return { version: PERSIST_VERSION, panes, nextNumber, newSettings };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

export function readLines(raw: unknown): ChatLine[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter((l): l is ChatLine => isObject(l) && (l.role === 'user' || l.role === 'assistant') && typeof l.text === 'string').map((l) => ({ role: l.role, text: l.text }));
}

/**
 * Saved data back into pane views: no engine session yet, so each pane's next message carries
 * its transcript as history (as after an engine restart). Anything malformed yields null.
 */
export function fromPersisted(raw: unknown): { order: string[]; views: Map<string, SessionView>; nextNumber: number; newSettings: SessionSettings } | null {
  if (!isObject(raw) || raw.version !== PERSIST_VERSION || !Array.isArray(raw.panes)) return null;
  const order: string[] = [];
  const views = new Map<string, SessionView>();
  for (const pane of raw.panes) {
    if (!isObject(pane) || typeof pane.paneId !== 'string' || typeof pane.label !== 'string' || views.has(pane.paneId)) continue;
    const view = newSessionView(pane.paneId, pane.label, readSettings(pane.settings));
    const lines = readLines(pane.lines);
    const draft = typeof pane.draft === 'string' && pane.draft !== '' ? { returnedDraft: pane.draft } : {};
    views.set(pane.paneId, { ...view, lines, restoreHistory: lines.length > 0, ...(lines.length > 0 ? { state: 'done' as const } : {}), ...draft });
    order.push(pane.paneId);
  }
  const highest = order.reduce((max, id) => Math.max(max, Number(/^p(\d+)$/.exec(id)?.[1] ?? 0)), 0);
  const nextNumber = Math.max(highest + 1, isFiniteNumber(raw.nextNumber) ? Math.floor(raw.nextNumber) : 1);
  return { order, views, nextNumber, newSettings: readSettings(raw.newSettings) };
}
