// The playground's saved panes as one record per pane plus an ordered index, and the rules that
// merge what several tabs write: pure, tested in Node. Not the storage: state/pane-storage.ts.
import { fromPersisted, readLines } from './persisted-sessions';
import { readSettings } from './session-settings';
import { isBusy, newSessionView, type ChatLine, type SessionView } from './session-view';
import { type SessionSettings } from './session-settings';

/** Version 1 kept every pane in one record (persisted-sessions.ts); 2 is this shape. */
export const RECORD_VERSION = 2;
export const LEGACY_KEY = 'cohort-sessions';
export const INDEX_KEY = 'cohort-panes:index';
export const PANE_KEY_PREFIX = 'cohort-pane:';
/** Where a record this page cannot read is moved, whole, so no version of the page overwrites it. */
export const ASIDE_KEY_PREFIX = 'cohort-aside:';
/** A closed pane's tombstone outlives any tab that could still hold a stale copy of the pane. */
export const TOMBSTONE_KEEP_MS = 30 * 24 * 3600 * 1000;

export const paneKey = (paneId: string): string => `${PANE_KEY_PREFIX}${paneId}`;
export const asideKey = (key: string, nowMs: number): string => `${ASIDE_KEY_PREFIX}${key}@${nowMs}`;

/** What a pane keeps across reloads. */
export interface PaneContent {
  label: string;
  settings: SessionSettings;
  lines: ChatLine[];
  /** A message that was waiting for the model: back in the composer after the reload. */
  draft?: string;
}

export interface PaneRecord extends PaneContent {
  version: typeof RECORD_VERSION;
  paneId: string;
  /** Bumped by one on each save of a change: a write is based on rev - 1. */
  rev: number;
  savedAtMs: number;
}

export interface PaneIndex {
  version: typeof RECORD_VERSION;
  /** Panes in the order they were opened; each has a record under paneKey(id). */
  order: string[];
  /** Tombstones: pane id -> when it was closed. A closed pane's record is deleted and never written again. */
  closed: Record<string, number>;
  nextNumber: number;
  newSettings: SessionSettings;
}

/** A stored value this page cannot read: from a newer version of the page, or damaged. */
export interface Unreadable {
  unreadable: string;
}

export const isUnreadable = (v: unknown): v is Unreadable => typeof v === 'object' && v !== null && typeof (v as Unreadable).unreadable === 'string';
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

function versionProblem(raw: Record<string, unknown>): Unreadable | null {
  if (raw.version === RECORD_VERSION) return null;
  if (typeof raw.version === 'number' && raw.version > RECORD_VERSION) return { unreadable: `saved by a newer version of the page (format ${raw.version})` };
  return { unreadable: 'damaged (no known format version)' };
}

/** What a pane keeps: its label, settings, non-empty lines (a reply saved as far as it got) and a held message. */
export function contentOf(view: SessionView): PaneContent {
  const lines = view.lines.filter((line) => line.text !== '').map((line) => ({ role: line.role, text: line.text }));
  return { label: view.label, settings: view.settings, lines, ...(view.waitingForModel ? { draft: view.waitingForModel.text } : {}) };
}

export function sameContent(a: PaneContent, b: PaneContent): boolean {
  const pick = (c: PaneContent) => JSON.stringify([c.label, c.settings, c.lines, c.draft ?? null]);
  return pick(a) === pick(b);
}

/** The record for a pane whose content changed since `previous` (its last saved or received record); null when unchanged. */
export function nextRecord(paneId: string, content: PaneContent, previous: PaneRecord | undefined, nowMs: number): PaneRecord | null {
  if (previous && sameContent(previous, content)) return null;
  return { version: RECORD_VERSION, paneId, ...content, rev: (previous?.rev ?? 0) + 1, savedAtMs: nowMs };
}

export function readPaneRecord(raw: unknown): PaneRecord | Unreadable {
  if (!isObject(raw)) return { unreadable: 'damaged (not a record)' };
  const problem = versionProblem(raw);
  if (problem) return problem;
  if (typeof raw.paneId !== 'string' || typeof raw.label !== 'string' || !Array.isArray(raw.lines) || !isCount(raw.rev)) return { unreadable: 'damaged (missing fields)' };
  const draft = typeof raw.draft === 'string' && raw.draft !== '' ? { draft: raw.draft } : {};
  return { version: RECORD_VERSION, paneId: raw.paneId, label: raw.label, settings: readSettings(raw.settings), lines: readLines(raw.lines), ...draft, rev: raw.rev, savedAtMs: typeof raw.savedAtMs === 'number' ? raw.savedAtMs : 0 };
}

export function readIndex(raw: unknown): PaneIndex | Unreadable {
  if (!isObject(raw)) return { unreadable: 'damaged (not an index)' };
  const problem = versionProblem(raw);
  if (problem) return problem;
  if (!Array.isArray(raw.order) || !isObject(raw.closed)) return { unreadable: 'damaged (missing fields)' };
  const closed: Record<string, number> = {};
  for (const [id, at] of Object.entries(raw.closed)) if (typeof at === 'number') closed[id] = at;
  const order = [...new Set(raw.order.filter((id): id is string => typeof id === 'string'))];
  return { version: RECORD_VERSION, order, closed, nextNumber: isCount(raw.nextNumber) ? raw.nextNumber : 1, newSettings: readSettings(raw.newSettings) };
}

export function emptyIndex(newSettings: SessionSettings): PaneIndex {
  return { version: RECORD_VERSION, order: [], closed: {}, nextNumber: 1, newSettings };
}

/** What a tab asks of the index: its own panes in order, the ones it closed, its counter and settings for new panes. */
export interface IndexChange {
  order: readonly string[];
  closed: readonly string[];
  nextNumber: number;
  newSettings?: SessionSettings;
}

/**
 * The index after a tab's change. Nothing but a tombstone removes a pane: panes this tab has not
 * seen stay where they are, its new ones are appended, and a closed pane stays closed whatever a
 * stale tab lists. Tombstones older than TOMBSTONE_KEEP_MS are dropped.
 */
export function mergeIndex(stored: PaneIndex, change: IndexChange, nowMs: number): PaneIndex {
  const closed: Record<string, number> = {};
  for (const [id, at] of Object.entries(stored.closed)) if (nowMs - at < TOMBSTONE_KEEP_MS) closed[id] = at;
  for (const id of change.closed) closed[id] ??= nowMs;
  const order = stored.order.filter((id) => !(id in closed));
  const present = new Set(order);
  for (const id of change.order) {
    if (id in closed || present.has(id)) continue;
    order.push(id);
    present.add(id);
  }
  return { version: RECORD_VERSION, order, closed, nextNumber: Math.max(stored.nextNumber, change.nextNumber), newSettings: change.newSettings ?? stored.newSettings };
}

const isPrefix = (short: readonly ChatLine[], long: readonly ChatLine[]) =>
  short.length <= long.length && short.every((line, i) => line.role === long[i]!.role && (line.text === long[i]!.text || (i === short.length - 1 && long[i]!.text.startsWith(line.text))));

/** `next`'s transcript only adds to `base`'s (more lines, or the last line streamed further). */
export function extendsTranscript(base: PaneContent, next: PaneContent): boolean {
  return isPrefix(base.lines, next.lines);
}

export type WriteDecision =
  | { kind: 'put'; record: PaneRecord }
  /** The stored copy already says the same: nothing to write. */
  | { kind: 'same'; stored: PaneRecord }
  /** Closed in some tab: never written again. */
  | { kind: 'closed' }
  /** Another tab changed the pane since this one's copy, and neither transcript contains the other. */
  | { kind: 'conflict'; stored: PaneRecord };

/**
 * What a write of `incoming` (based on rev - 1) does to the stored record. A newer stored copy is
 * never overwritten by an older one; a write that only adds to it (the stream went on) is put on
 * top of it. An unreadable stored value is moved aside by the storage before this runs.
 */
export function decideWrite(stored: PaneRecord | undefined, closedAtMs: number | undefined, incoming: PaneRecord): WriteDecision {
  if (closedAtMs !== undefined) return { kind: 'closed' };
  if (!stored || stored.rev < incoming.rev) return { kind: 'put', record: incoming };
  if (sameContent(stored, incoming)) return { kind: 'same', stored };
  if (extendsTranscript(stored, incoming)) return { kind: 'put', record: { ...incoming, rev: stored.rev + 1 } };
  return { kind: 'conflict', stored };
}

/**
 * A record another tab sent, against this tab's pane and the record it last saved or took.
 * 'keep': this tab's copy stays: it is as new, a turn or held message of its own runs in it, or it
 * holds a change not saved yet (a turn that just ended, a rewind): that save puts it on top of the
 * stored copy or beside it (decideWrite), so it is never dropped by taking the other tab's copy.
 * 'adopt': the pane shows the record.
 */
export function remoteDecision(local: SessionView | undefined, known: PaneRecord | undefined, record: PaneRecord): 'keep' | 'adopt' {
  if (!local) return 'adopt';
  if (isBusy({ ...local, busyElsewhere: false })) return 'keep';
  if (known !== undefined && known.rev >= record.rev) return 'keep';
  const unsaved = known === undefined ? contentOf(local).lines.length > 0 : !sameContent(contentOf(local), known);
  return unsaved ? 'keep' : 'adopt';
}

/**
 * A saved pane as a view with no engine session: its next message carries the transcript as history.
 * Its settings are read again: a record another tab sent may come from an older page, without the newer fields.
 */
export function viewFromRecord(record: PaneContent & { paneId: string }): SessionView {
  const view = newSessionView(record.paneId, record.label, readSettings(record.settings));
  const lines = record.lines.map((l) => ({ role: l.role, text: l.text }));
  return { ...view, lines, restoreHistory: lines.length > 0, ...(lines.length > 0 ? { state: 'done' as const } : {}), ...(record.draft ? { returnedDraft: record.draft } : {}) };
}

/**
 * A tab's pane order put in the stored order (another tab's save says it): panes the stored order
 * lists come in its order, the others (new here, or the app's own compare panes) keep their place after them.
 */
export function followOrder(local: readonly string[], stored: readonly string[]): readonly string[] {
  const here = new Set(local);
  const listed = stored.filter((id) => here.has(id));
  const inStored = new Set(listed);
  const next = [...listed, ...local.filter((id) => !inStored.has(id))];
  return next.every((id, i) => id === local[i]) ? local : next;
}

/** The number in a pane id (`p12`, or `p12-<tab>` since ids carry the tab that opened them). */
export const paneNumber = (paneId: string): number => Number(/^p(\d+)/.exec(paneId)?.[1] ?? 0);

/**
 * The panes to show from storage: the index's order, then any record the index does not list
 * and no tombstone names (oldest first), so a record is never hidden by a damaged index.
 */
export function panesFromStorage(index: PaneIndex, records: readonly PaneRecord[]): { order: string[]; views: Map<string, SessionView>; nextNumber: number; newSettings: SessionSettings } {
  const byId = new Map(records.filter((r) => !(r.paneId in index.closed)).map((r) => [r.paneId, r]));
  const listed = index.order.filter((id) => byId.has(id));
  const unlisted = [...byId.values()].filter((r) => !listed.includes(r.paneId)).sort((a, b) => a.savedAtMs - b.savedAtMs).map((r) => r.paneId);
  const order = [...listed, ...unlisted];
  const views = new Map(order.map((id) => [id, viewFromRecord(byId.get(id)!)]));
  const highest = order.reduce((max, id) => Math.max(max, paneNumber(id)), 0);
  return { order, views, nextNumber: Math.max(index.nextNumber, highest + 1), newSettings: index.newSettings };
}

/**
 * The version-1 record as version-2 records and index entries (rev 1). A legacy pane that a
 * record already holds replaces it when it adds to that record's transcript (a tab still on the
 * old page went on writing it), else it is kept beside it; a closed one is not brought back. Null: the old record is unreadable.
 */
export function migrateLegacy(raw: unknown, index: PaneIndex, records: ReadonlyMap<string, PaneRecord>, nowMs: number): { index: PaneIndex; records: PaneRecord[] } | null {
  const legacy = fromPersisted(raw);
  if (!legacy) return null;
  const written: PaneRecord[] = [];
  for (const id of legacy.order) {
    if (id in index.closed) continue;
    const content = contentOf(legacy.views.get(id)!);
    const current = records.get(id);
    if (current && sameContent(current, content)) continue;
    // Both went on apart: the old page's copy becomes a pane of its own rather than being dropped.
    if (current && !extendsTranscript(current, content)) written.push({ version: RECORD_VERSION, paneId: `${id}-old`, ...content, label: `${content.label} (older copy)`, rev: 1, savedAtMs: nowMs });
    else written.push({ version: RECORD_VERSION, paneId: id, ...content, rev: (current?.rev ?? 0) + 1, savedAtMs: nowMs });
  }
  const order = [...legacy.order.flatMap((id) => [id, ...(written.some((r) => r.paneId === `${id}-old`) ? [`${id}-old`] : [])])];
  const merged = mergeIndex(index, { order, closed: [], nextNumber: legacy.nextNumber, ...(index.order.length === 0 ? { newSettings: legacy.newSettings } : {}) }, nowMs);
  return { index: merged, records: written };
}
