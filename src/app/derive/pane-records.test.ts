// Tests for the merge rules of the per-pane records: what a write does to a stored copy, what
// a tab does with another tab's record, the index's tombstones, reading and migrating old data.
import { describe, expect, it } from 'vitest';
import {
  contentOf, decideWrite, emptyIndex, followOrder, mergeIndex, migrateLegacy, nextRecord, panesFromStorage, readIndex, readPaneRecord, remoteDecision, RECORD_VERSION, TOMBSTONE_KEEP_MS,
  type PaneRecord,
} from './pane-records';
import { PERSIST_VERSION, toPersisted } from './persisted-sessions';
import { beginTurn, newSessionView, type ChatLine, type SessionView } from './session-view';
import { DEFAULT_SETTINGS } from './session-settings';

const user = (text: string): ChatLine => ({ role: 'user', text });
const bot = (text: string): ChatLine => ({ role: 'assistant', text });
const record = (paneId: string, rev: number, lines: ChatLine[], savedAtMs = rev): PaneRecord => ({ version: RECORD_VERSION, paneId, label: `#${paneId}`, settings: DEFAULT_SETTINGS, lines, rev, savedAtMs });
const view = (paneId: string, lines: ChatLine[]): SessionView => ({ ...newSessionView(paneId, `#${paneId}`, DEFAULT_SETTINGS), state: 'done', lines });

describe('pane records', () => {
  it('a pane gets a new record, one rev up, only when its content changed', () => {
    const first = nextRecord('p1', contentOf(view('p1', [user('a'), bot('b')])), undefined, 10)!;
    expect(first).toMatchObject({ rev: 1, lines: [user('a'), bot('b')], savedAtMs: 10 });
    expect(nextRecord('p1', contentOf(view('p1', [user('a'), bot('b')])), first, 20)).toBeNull();
    // a reply streaming is saved as far as it got; the empty placeholder is not a line
    const streaming = beginTurn(view('p1', [user('a'), bot('b')]), 'c', 0);
    expect(nextRecord('p1', contentOf(streaming), first, 30)).toMatchObject({ rev: 2, lines: [user('a'), bot('b'), user('c')] });
  });

  it('a write never puts an older copy over a newer one, and puts a copy that only adds to it on top', () => {
    const stored = record('p1', 5, [user('a'), bot('bb')]);
    expect(decideWrite(undefined, undefined, record('p1', 1, [user('a')]))).toMatchObject({ kind: 'put', record: { rev: 1 } });
    expect(decideWrite(stored, undefined, record('p1', 6, [user('a'), bot('bb'), user('c')]))).toMatchObject({ kind: 'put', record: { rev: 6 } });
    // a stale tab's copy, one turn behind: the stored one stays
    expect(decideWrite(stored, undefined, record('p1', 3, [user('a')]))).toEqual({ kind: 'conflict', stored });
    expect(decideWrite(stored, undefined, record('p1', 5, [user('a'), bot('bb')]))).toEqual({ kind: 'same', stored });
    // the stream went on in the tab that wrote rev 5 while another rev 5 landed: on top, as rev 6
    expect(decideWrite(stored, undefined, record('p1', 5, [user('a'), bot('bbb')]))).toMatchObject({ kind: 'put', record: { rev: 6, lines: [user('a'), bot('bbb')] } });
    // two tabs sent different messages from the same base: neither is dropped here
    expect(decideWrite(stored, undefined, record('p1', 5, [user('a'), bot('bb'), user('other')]))).toMatchObject({ kind: 'put' });
    expect(decideWrite(record('p1', 6, [user('a'), bot('bb'), user('mine')]), undefined, record('p1', 6, [user('a'), bot('bb'), user('other')])).kind).toBe('conflict');
  });

  it('a closed pane is never written again, by any rev', () => {
    expect(decideWrite(undefined, 100, record('p1', 99, [user('late')]))).toEqual({ kind: 'closed' });
  });

  it('another tab\'s record is shown unless this tab\'s copy is as new, a turn of its own runs in the pane, or it holds a change not saved yet', () => {
    const incoming = record('p1', 4, [user('a'), bot('b')]);
    const saved = record('p1', 3, [user('a')]);
    expect(remoteDecision(undefined, undefined, incoming)).toBe('adopt');
    expect(remoteDecision(view('p1', [user('a')]), saved, incoming)).toBe('adopt');
    expect(remoteDecision(view('p1', [user('a')]), { ...saved, rev: 4 }, incoming)).toBe('keep');
    const streaming = { ...beginTurn(view('p1', [user('a')]), 'mine', 0), state: 'decode' as const };
    expect(remoteDecision(streaming, record('p1', 1, [user('a')]), incoming)).toBe('keep');
    // a turn that ended here after the last save: taking the other copy would drop it unsaved
    expect(remoteDecision(view('p1', [user('a'), user('mine'), bot('ok')]), saved, incoming)).toBe('keep');
    expect(remoteDecision(view('p1', [user('a')]), undefined, incoming)).toBe('keep');
    expect(remoteDecision(view('p1', []), undefined, incoming)).toBe('adopt');
    // a pane another tab streams into takes that tab's newer saves
    expect(remoteDecision({ ...view('p1', [user('a')]), busyElsewhere: true }, saved, incoming)).toBe('adopt');
  });

  it('the index keeps panes it has not seen, appends new ones, and a tombstone beats a stale tab\'s list', () => {
    let index = mergeIndex(emptyIndex(DEFAULT_SETTINGS), { order: ['p1-a', 'p2-a'], closed: [], nextNumber: 3 }, 0);
    // tab B knew p1-a only, opened p3-b
    index = mergeIndex(index, { order: ['p1-a', 'p3-b'], closed: [], nextNumber: 4 }, 1);
    expect(index.order).toEqual(['p1-a', 'p2-a', 'p3-b']);
    expect(index.nextNumber).toBe(4);
    index = mergeIndex(index, { order: ['p1-a', 'p3-b'], closed: ['p2-a'], nextNumber: 4 }, 2);
    // A, still listing p2-a, saves again: p2-a stays closed
    index = mergeIndex(index, { order: ['p1-a', 'p2-a', 'p3-b'], closed: [], nextNumber: 3 }, 3);
    expect(index.order).toEqual(['p1-a', 'p3-b']);
    expect(index.closed).toEqual({ 'p2-a': 2 });
    expect(mergeIndex(index, { order: [], closed: [], nextNumber: 1 }, 2 + TOMBSTONE_KEEP_MS).closed).toEqual({});
  });

  it('a tab follows the stored order for the panes it lists, keeping its own others after them', () => {
    const local = ['p2', 'c1', 'p1'];
    expect(followOrder(local, ['p1', 'gone', 'p2'])).toEqual(['p1', 'p2', 'c1']);
    expect(followOrder(local, ['p2', 'p1'])).toEqual(['p2', 'p1', 'c1']);
    const same = ['p1', 'p2'];
    expect(followOrder(same, ['p1', 'p2', 'p3'])).toBe(same);
  });

  it('shows the index\'s panes in order, then records the index does not list, never a closed one', () => {
    const index = { ...emptyIndex(DEFAULT_SETTINGS), order: ['p2-a', 'gone', 'p1-a'], closed: { 'p9-b': 5 }, nextNumber: 3 };
    const restored = panesFromStorage(index, [record('p1-a', 1, [user('x'), bot('y')]), record('p2-a', 1, []), record('p7-b', 2, [user('z')], 9), record('p9-b', 1, [user('closed')])]);
    expect(restored.order).toEqual(['p2-a', 'p1-a', 'p7-b']);
    expect(restored.nextNumber).toBe(8);
    expect(restored.views.get('p1-a')).toMatchObject({ state: 'done', restoreHistory: true, lines: [user('x'), bot('y')] });
    expect(restored.views.get('p1-a')!.engineId).toBeUndefined();
    expect(restored.views.get('p2-a')).toMatchObject({ state: 'idle', restoreHistory: false });
  });

  it('reads a newer or damaged record as unreadable, never as an empty pane', () => {
    expect(readPaneRecord({ ...record('p1', 1, []), version: RECORD_VERSION + 1 })).toEqual({ unreadable: expect.stringContaining('newer version') });
    expect(readPaneRecord({ version: RECORD_VERSION, paneId: 'p1' })).toEqual({ unreadable: expect.stringContaining('damaged') });
    expect(readPaneRecord('x')).toEqual({ unreadable: expect.stringContaining('damaged') });
    expect(readIndex({ version: 7, order: [] })).toEqual({ unreadable: expect.stringContaining('newer version') });
    expect(readPaneRecord(JSON.parse(JSON.stringify({ ...record('p1', 2, [user('a')]), draft: 'held' })))).toMatchObject({ rev: 2, draft: 'held', lines: [user('a')] });
  });

  it('migrates the single version-1 record into records, without dropping a pane that went on apart', () => {
    const old = toPersisted(['p1', 'p2'], new Map([['p1', view('p1', [user('a'), bot('b')])], ['p2', view('p2', [user('c')])]]), 3, { ...DEFAULT_SETTINGS, temperature: 0 });
    expect(old.version).toBe(PERSIST_VERSION);
    const fresh = migrateLegacy(old, emptyIndex(DEFAULT_SETTINGS), new Map(), 50)!;
    expect(fresh.records.map((r) => [r.paneId, r.rev, r.lines])).toEqual([['p1', 1, [user('a'), bot('b')]], ['p2', 1, [user('c')]]]);
    expect(fresh.index).toMatchObject({ order: ['p1', 'p2'], nextNumber: 3, newSettings: { temperature: 0 } });
    // a tab on the old page wrote the legacy record again after the migration
    const records = new Map([['p1', record('p1', 4, [user('a'), bot('b'), user('newer here')])], ['p2', record('p2', 2, [user('c')])]]);
    const again = migrateLegacy(toPersisted(['p1', 'p2'], new Map([['p1', view('p1', [user('a'), bot('b'), user('old page')])], ['p2', view('p2', [user('c'), bot('d')])]]), 3, DEFAULT_SETTINGS), fresh.index, records, 60)!;
    expect(again.records.map((r) => [r.paneId, r.rev, r.label])).toEqual([['p1-old', 1, '#p1 (older copy)'], ['p2', 3, '#p2']]);
    expect(again.index.order).toEqual(['p1', 'p2', 'p1-old']);
    expect(migrateLegacy({ version: 99, panes: [] }, emptyIndex(DEFAULT_SETTINGS), new Map(), 0)).toBeNull();
  });
});
