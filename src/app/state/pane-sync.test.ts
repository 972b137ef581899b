// Tabs of the playground in Node: each its own sessions store and pane sync, sharing one IndexedDB
// (fake-indexeddb) and one channel. Two tabs' work kept, closes never undone, a crash, refused and unreadable storage, migration.
import 'fake-indexeddb/auto';
import { createStore as createIdbStore, get, set, type UseStore } from 'idb-keyval';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { INDEX_KEY, LEGACY_KEY, paneKey, RECORD_VERSION } from '../derive/pane-records';
import { toPersisted } from '../derive/persisted-sessions';
import { holdForModel } from '../derive/held-message';
import { beginTurn, newSessionView, type SessionView } from '../derive/session-view';
import { DEFAULT_SETTINGS } from '../derive/session-settings';
import { loadPanes, writePanes } from './pane-storage';
import { BUSY_LEASE_MS, createPaneSync, SAVE_EVERY_MS, type PaneMessage, type PaneStorage, type PaneSync, type StorageNotice } from './pane-sync';
import { sessionsState, type SessionsState } from './sessions-store';

let dbNumber = 0;
let db: UseStore;
type Listener = { tab: string; onMessage: (m: PaneMessage) => void };
let listeners: Listener[];

interface Tab {
  store: StoreApi<SessionsState>;
  sync: PaneSync;
  notices: StorageNotice[];
  posted: PaneMessage[];
  /** The tab is killed (no pagehide): it sends, hears and saves nothing more. */
  kill(): void;
}

/** A tab of the page: `channel: false` is a tab whose messages are lost (it sees no other tab live). */
async function openTab(tabId: string, options: { channel?: boolean; storage?: PaneStorage; loadGate?: Promise<void> } = {}): Promise<Tab> {
  const store = createStore<SessionsState>()(sessionsState);
  const notices: StorageNotice[] = [];
  const posted: PaneMessage[] = [];
  let live = options.channel ?? true;
  let dead = false;
  const storage = options.storage ?? { load: (now) => loadPanes(now, db), write: (r, c, change, now) => writePanes(r, c, change, now, db) };
  const sync = createPaneSync({
    store,
    storage: { load: async (now) => (await options.loadGate, storage.load(now)), write: (...args) => (dead ? new Promise<never>(() => undefined) : storage.write(...args)) },
    channel: {
      // as a BroadcastChannel: a copy, to every other tab, later
      post: (m) => {
        posted.push(m);
        if (!live) return;
        const copy = structuredClone(m);
        for (const l of listeners) if (l.tab !== tabId) queueMicrotask(() => l.onMessage(copy));
      },
      listen: (onMessage) => void (live && listeners.push({ tab: tabId, onMessage })),
    },
    tabId,
    now: () => Date.now(),
    closePane: (id) => store.getState().removePane(id),
    dropEngineSession: () => undefined,
    notify: (n) => void notices.push(n),
  });
  await sync.start();
  const kill = () => {
    dead = true;
    live = false;
    listeners = listeners.filter((l) => l.tab !== tabId);
  };
  return { store, sync, notices, posted, kill };
}

const texts = (tab: Tab) => tab.store.getState().order.map((id) => tab.store.getState().views.get(id)!.lines.map((l) => l.text));
const allText = (tab: Tab) => texts(tab).flat();

function answer(tab: Tab, paneId: string, prompt: string, reply: string): void {
  tab.store.getState().updateView(paneId, (v) => ({ ...beginTurn(v, prompt, 0), state: 'done', lines: [...v.lines, { role: 'user', text: prompt }, { role: 'assistant', text: reply }] }));
}

/** Lets timers due within `ms` run, then waits for the saves they began and the messages they sent. */
async function pass(ms: number, ...tabs: Tab[]): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (const tab of tabs) await tab.sync.settled();
  await new Promise((resolve) => setImmediate(resolve));
}

/** Tab a opens a pane and answers in it once ('first', 'ok first'), saved; then tab b opens and shows it. */
async function twoTabsOnePane(): Promise<{ a: Tab; b: Tab; p: string }> {
  const a = await openTab('a');
  const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
  answer(a, p!, 'first', 'ok first');
  await pass(SAVE_EVERY_MS, a);
  return { a, b: await openTab('b'), p: p! };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  db = createIdbStore(`panes-test-${++dbNumber}`, 'keyval');
  listeners = [];
});
afterEach(() => vi.useRealTimers());

describe('pane sync across tabs', () => {
  it('the issue\'s sequence: two tabs, each with its own pane, both reloaded: every message is there', async () => {
    const a = await openTab('a');
    const [a1] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(a, a1, 'remember MARK-A1', 'ok A1');
    await pass(SAVE_EVERY_MS, a);
    const b = await openTab('b');
    expect(allText(b)).toEqual(['remember MARK-A1', 'ok A1']);
    const [b1] = b.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(b, b1, 'remember MARK-B1', 'ok B1');
    const [a2] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(a, a2, 'remember MARK-A2', 'ok A2');
    expect(a2).not.toBe(b1);
    await pass(SAVE_EVERY_MS, a, b);
    await pass(SAVE_EVERY_MS, a, b);
    // kept in step live: each tab shows the other's panes
    expect(allText(a).sort()).toEqual(allText(b).sort());
    const [a3, b3] = [await openTab('a3'), await openTab('b3')];
    for (const tab of [a3, b3]) expect(allText(tab).sort()).toEqual(['ok A1', 'ok A2', 'ok B1', 'remember MARK-A1', 'remember MARK-A2', 'remember MARK-B1']);
  });

  it('tabs that never hear each other still keep both tabs\' panes (the index merges, a record is written only by its changes)', async () => {
    const a = await openTab('a', { channel: false });
    const b = await openTab('b', { channel: false });
    const [a1] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    const [b1] = b.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(b, b1, 'remember MARK-B1', 'ok B1');
    answer(a, a1, 'remember MARK-A1', 'ok A1');
    await pass(SAVE_EVERY_MS, a, b);
    answer(a, a1, 'more from A', 'ok');
    await pass(SAVE_EVERY_MS, a, b);
    expect(allText(await openTab('c')).sort()).toEqual(['more from A', 'ok', 'ok A1', 'ok B1', 'remember MARK-A1', 'remember MARK-B1']);
  });

  it('every tab shows the stored order: panes opened at once in two tabs, and a tab whose load was overtaken by another tab\'s save', async () => {
    const a = await openTab('a');
    const b = await openTab('b');
    const [a1] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    await pass(SAVE_EVERY_MS, a, b);
    const [b2] = b.store.getState().addPanes([DEFAULT_SETTINGS]);
    const [a2] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    await pass(SAVE_EVERY_MS, a, b);
    await pass(SAVE_EVERY_MS, a, b);
    expect(a.store.getState().order).toEqual(b.store.getState().order);
    expect(new Set(a.store.getState().order)).toEqual(new Set([a1, a2, b2]));
    let open!: () => void;
    const late = openTab('late', { loadGate: new Promise<void>((resolve) => (open = resolve)) });
    await Promise.resolve();
    const [a3] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    await pass(SAVE_EVERY_MS, a);
    open();
    const c = await late;
    expect(c.store.getState().order).toEqual(a.store.getState().order);
    expect(c.store.getState().order.at(-1)).toBe(a3);
  });

  it('a pane from a tab still on an older page (settings without the newer fields) shows with those fields at their defaults', async () => {
    const a = await openTab('a');
    const old = { systemPrompt: '', temperature: 0.2, topP: 1, topK: 0, maxNewTokens: 32, seed: null, speculation: 'auto' };
    const record = { version: 2, paneId: 'p9-old', label: '#9', settings: old, lines: [{ role: 'user', text: 'hi' }], rev: 1, savedAtMs: 0 };
    const message = { from: 'old', records: [record], closed: [], busy: [], order: ['p9-old'], nextNumber: 10, newSettings: old } as unknown as PaneMessage;
    for (const l of listeners) if (l.tab === 'a') l.onMessage(message);
    expect(a.store.getState().views.get('p9-old')!.settings).toEqual({ ...DEFAULT_SETTINGS, ...old });
    expect(a.store.getState().newSettings).toEqual({ ...DEFAULT_SETTINGS, ...old });
  });

  it('a pane closed in one tab is not brought back by another tab\'s stale copy, live or not', async () => {
    const a = await openTab('a');
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(a, p, 'x', 'y');
    await pass(SAVE_EVERY_MS, a);
    const live = await openTab('live');
    const stale = await openTab('stale', { channel: false });
    expect(live.store.getState().order).toEqual([p]);
    a.store.getState().removePane(p);
    await pass(SAVE_EVERY_MS, a, live);
    expect(live.store.getState().order).toEqual([]);
    // the stale tab goes on in the closed pane: its write is refused and it closes the pane too
    answer(stale, p, 'late', 'reply');
    await pass(SAVE_EVERY_MS, stale);
    expect(stale.store.getState().order).toEqual([]);
    expect(await get(paneKey(p), db)).toBeUndefined();
    expect((await openTab('fresh')).store.getState().order).toEqual([]);
  });

  it('a pane streaming in one tab shows live in the other, held busy there, and an older copy never overwrites it', async () => {
    const a = await openTab('a');
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    const b = await openTab('b');
    const stale = await openTab('stale', { channel: false });
    await pass(SAVE_EVERY_MS, a, b);
    expect(stale.store.getState().order).toEqual([]);
    const streaming = (reply: string) => a.store.getState().updateView(p, (v) => ({ ...v, state: 'decode', lines: [{ role: 'user', text: 'long one' }, { role: 'assistant', text: reply }] }));
    streaming('tok');
    await pass(SAVE_EVERY_MS, a, b);
    expect(b.store.getState().views.get(p)).toMatchObject({ busyElsewhere: true, lines: [{ text: 'long one' }, { text: 'tok' }] });
    streaming('tok tok');
    await pass(SAVE_EVERY_MS, a, b);
    expect(b.store.getState().views.get(p)!.lines[1]!.text).toBe('tok tok');
    // a tab that loaded before the stream and never heard it writes its own turn into the pane
    const stale2 = await openTab('stale2', { channel: false });
    stale2.store.getState().updateView(p, (v) => ({ ...v, lines: [{ role: 'user', text: 'other' }, { role: 'assistant', text: 'from stale2' }] }));
    stale2.store.getState().updateView(p, (v) => ({ ...v, lines: [{ role: 'user', text: 'other one' }, { role: 'assistant', text: 'from stale2' }] }));
    await pass(SAVE_EVERY_MS, stale2);
    await pass(SAVE_EVERY_MS, stale2);
    streaming('tok tok tok');
    await pass(SAVE_EVERY_MS, a, b);
    a.store.getState().updateView(p, (v) => ({ ...v, state: 'done' }));
    await pass(SAVE_EVERY_MS, a, b);
    expect(b.store.getState().views.get(p)!.busyElsewhere).toBeUndefined();
    // the stream stays whole under its id; the other copy is a pane of its own right after it, in both live tabs and after a reload
    const both = [['long one', 'tok tok tok'], ['other one', 'from stale2']];
    for (const tab of [a, b, await openTab('reloaded')]) expect(texts(tab)).toEqual(both);
    expect(a.store.getState().order[0]).toBe(p);
  });

  it('a change not saved yet is not dropped when another tab\'s newer copy of the pane arrives first: both are kept', async () => {
    const { a, b, p } = await twoTabsOnePane();
    answer(b, p, 'from b', 'ok b');
    await vi.advanceTimersByTimeAsync(SAVE_EVERY_MS - 100);
    // a's turn ends inside b's save interval: b's copy (rev 2, without it) reaches a before a saves
    answer(a, p, 'from a', 'ok a');
    await pass(100, b);
    await pass(SAVE_EVERY_MS, a, b);
    await pass(SAVE_EVERY_MS, a, b);
    for (const tab of [a, b, await openTab('c')]) {
      expect(allText(tab)).toEqual(expect.arrayContaining(['from a', 'ok a', 'from b', 'ok b']));
      expect(allText(tab).sort()).toEqual(allText(a).sort());
    }
  });

  it('two tabs stream a turn each into the same pane at once: after both end, every line of both is kept, live and after a reload', async () => {
    const { a, b, p } = await twoTabsOnePane();
    const base = [{ role: 'user' as const, text: 'first' }, { role: 'assistant' as const, text: 'ok first' }];
    const stream = (tab: Tab, who: string, reply: string, state: 'decode' | 'done') =>
      tab.store.getState().updateView(p, (v) => ({ ...v, state, lines: [...base, { role: 'user', text: `from ${who}` }, { role: 'assistant', text: reply }] }));
    for (let i = 1; i <= 4; i++) {
      stream(a, 'a', `a${'.'.repeat(i)}`, 'decode');
      stream(b, 'b', `b${'.'.repeat(i)}`, 'decode');
      await pass(SAVE_EVERY_MS / 2, a, b);
    }
    stream(a, 'a', 'a done', 'done');
    await pass(SAVE_EVERY_MS / 4, a, b);
    stream(b, 'b', 'b done', 'done');
    for (let i = 0; i < 4; i++) await pass(SAVE_EVERY_MS, a, b);
    for (const tab of [a, b, await openTab('c')]) expect(allText(tab)).toEqual(expect.arrayContaining(['from a', 'a done', 'from b', 'b done']));
  });

  it('a message held for the model in one tab stays saved while another tab shows the pane: the holding tab\'s reload brings it back', async () => {
    const { a, b, p } = await twoTabsOnePane();
    a.store.getState().updateView(p, (v) => holdForModel(v, 'held until the model loads', 0));
    for (let i = 0; i < 4; i++) await pass(SAVE_EVERY_MS, a, b);
    // the other tab shows the pane held, without the message, and writes nothing over it
    expect(b.store.getState().views.get(p)).toMatchObject({ busyElsewhere: true, lines: [{ text: 'first' }, { text: 'ok first' }] });
    expect(b.store.getState().views.get(p)!.waitingForModel).toBeUndefined();
    a.kill();
    expect((await openTab('a-reloaded')).store.getState().views.get(p)!.returnedDraft).toBe('held until the model loads');
  });

  it('a pane closed in one tab while the other streams into another: the close holds, the stream is kept whole', async () => {
    const a = await openTab('a');
    const [keep, close] = a.store.getState().addPanes([DEFAULT_SETTINGS, DEFAULT_SETTINGS]);
    answer(a, close, 'bye', 'ok');
    await pass(SAVE_EVERY_MS, a);
    const b = await openTab('b');
    a.store.getState().updateView(keep, (v) => ({ ...v, state: 'decode', lines: [{ role: 'user', text: 'go' }, { role: 'assistant', text: 'partial' }] }));
    b.store.getState().removePane(close);
    await pass(SAVE_EVERY_MS, a, b);
    a.store.getState().updateView(keep, (v) => ({ ...v, state: 'done', lines: [{ role: 'user', text: 'go' }, { role: 'assistant', text: 'partial and the rest' }] }));
    await pass(SAVE_EVERY_MS, a, b);
    for (const tab of [a, b, await openTab('c')]) expect(texts(tab)).toEqual([['go', 'partial and the rest']]);
  });

  it('a tab killed mid-stream (no pagehide) keeps everything up to its last save, and loses at most one save interval', async () => {
    const a = await openTab('a');
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    const stream = (reply: string) => a.store.getState().updateView(p, (v) => ({ ...v, state: 'decode', lines: [{ role: 'user', text: 'q' }, { role: 'assistant', text: reply }] }));
    stream('one');
    await vi.advanceTimersByTimeAsync(SAVE_EVERY_MS - 1);
    stream('one two');
    // the interval ends: what the pane held then is saved, with no pagehide and no idle moment
    await pass(1, a);
    stream('one two three');
    await pass(SAVE_EVERY_MS - 1, a);
    a.kill();
    const after = await openTab('after');
    expect(after.store.getState().views.get(p)!.lines.map((l) => l.text)).toEqual(['q', 'one two']);
    // the busy hold of a silent tab ends
    expect(after.store.getState().views.get(p)!.busyElsewhere).toBeUndefined();
  });

  it('a silent tab\'s busy hold ends after the lease', async () => {
    const a = await openTab('a');
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    const b = await openTab('b');
    a.store.getState().updateView(p, (v) => ({ ...v, state: 'decode', lines: [{ role: 'user', text: 'q' }, { role: 'assistant', text: 'a' }] }));
    await pass(SAVE_EVERY_MS, a, b);
    expect(b.store.getState().views.get(p)!.busyElsewhere).toBe(true);
    // a is killed: its heartbeats stop; b holds the pane until the lease runs out, then frees it
    a.kill();
    await pass(BUSY_LEASE_MS - SAVE_EVERY_MS - 1, b);
    expect(b.store.getState().views.get(p)!.busyElsewhere).toBe(true);
    await pass(SAVE_EVERY_MS + 1, b);
    expect(b.store.getState().views.get(p)!.busyElsewhere).toBeUndefined();
    expect(b.store.getState().views.get(p)!.lines.map((l) => l.text)).toEqual(['q', 'a']);
  });
});

describe('a tab that goes', () => {
  it('frees the panes it was answering in for the other tabs at once (pagehide), with its last save', async () => {
    const a = await openTab('a');
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    const b = await openTab('b');
    a.store.getState().updateView(p, (v) => ({ ...v, state: 'decode', lines: [{ role: 'user', text: 'q' }, { role: 'assistant', text: 'part' }] }));
    await pass(SAVE_EVERY_MS, a, b);
    expect(b.store.getState().views.get(p)!.busyElsewhere).toBe(true);
    a.store.getState().updateView(p, (v) => ({ ...v, lines: [{ role: 'user', text: 'q' }, { role: 'assistant', text: 'part and more' }] }));
    a.sync.leave();
    await a.sync.save();
    await pass(0, b);
    expect(b.store.getState().views.get(p)!.busyElsewhere).toBeUndefined();
    expect(b.store.getState().views.get(p)!.lines.map((l) => l.text)).toEqual(['q', 'part and more']);
  });
});

describe('storage faults and the old record', () => {
  it('refused storage: said once, the page keeps working in memory and the other tabs still see it', async () => {
    let writes = 0;
    const refusing: PaneStorage = {
      load: () => Promise.reject(new DOMException('refused', 'InvalidStateError')),
      write: () => ((writes += 1), Promise.reject(new DOMException('full', 'QuotaExceededError'))),
    };
    const a = await openTab('a', { storage: refusing });
    const b = await openTab('b', { storage: refusing });
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(a, p, 'in memory', 'still here');
    await pass(SAVE_EVERY_MS, a, b);
    answer(a, p, 'again', 'yes');
    await pass(SAVE_EVERY_MS, a, b);
    expect(a.notices).toEqual([{ kind: 'memory', reason: 'InvalidStateError: refused' }]);
    expect(writes).toBe(0);
    expect(allText(a)).toEqual(['in memory', 'still here', 'again', 'yes']);
    expect(allText(b)).toEqual(allText(a));
  });

  it('a full disk on a later save: said once, nothing shown is lost', async () => {
    let full = false;
    const filling: PaneStorage = { load: (now) => loadPanes(now, db), write: (r, c, ch, now) => (full ? Promise.reject(new DOMException('full', 'QuotaExceededError')) : writePanes(r, c, ch, now, db)) };
    const a = await openTab('a', { storage: filling });
    const [p] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    answer(a, p, 'saved', 'ok');
    await pass(SAVE_EVERY_MS, a);
    full = true;
    for (const n of [1, 2, 3]) {
      answer(a, p, `unsaved ${n}`, 'ok');
      await pass(SAVE_EVERY_MS, a);
    }
    expect(a.notices).toEqual([{ kind: 'memory', reason: 'QuotaExceededError: full' }]);
    expect(allText(a)).toContain('unsaved 3');
    expect(allText(await openTab('after'))).toEqual(['saved', 'ok']);
  });

  it('a record from a newer version or a damaged one is set aside untouched, and the page says so', async () => {
    const newer = { version: RECORD_VERSION + 1, paneId: 'p1-x', somethingNew: [1, 2] };
    await set(paneKey('p1-x'), newer, db);
    await set(paneKey('p2-x'), { version: RECORD_VERSION, paneId: 'p2-x' }, db);
    await set(paneKey('p3-x'), { version: RECORD_VERSION, paneId: 'p3-x', label: '#3', lines: [{ role: 'user', text: 'fine' }], rev: 1, settings: DEFAULT_SETTINGS }, db);
    const a = await openTab('a');
    expect(allText(a)).toEqual(['fine']);
    const notice = a.notices.find((n) => n.kind === 'unreadable');
    expect(notice?.kind === 'unreadable' && notice.setAside.map((s) => [s.key, s.why])).toEqual([
      [paneKey('p1-x'), expect.stringContaining('newer version')],
      [paneKey('p2-x'), expect.stringContaining('damaged')],
    ]);
    const asideKey = notice!.kind === 'unreadable' ? notice!.setAside[0]!.asideKey : '';
    expect(await get(asideKey, db)).toEqual(newer);
    // saves go on and never touch what was set aside
    a.store.getState().addPanes([DEFAULT_SETTINGS]);
    await pass(SAVE_EVERY_MS, a);
    expect(await get(asideKey, db)).toEqual(newer);
    const b = await openTab('b');
    expect(b.notices).toEqual([]);
  });

  it('migrates the single saved record of the earlier version on first load, without loss, once', async () => {
    const view = (id: string, text: string): SessionView => ({ ...newSessionView(id, `#${id.slice(1)}`, DEFAULT_SETTINGS), state: 'done', lines: [{ role: 'user', text }, { role: 'assistant', text: `re ${text}` }] });
    await set(LEGACY_KEY, JSON.parse(JSON.stringify(toPersisted(['p1', 'p2'], new Map([['p1', view('p1', 'first')], ['p2', view('p2', 'second')]]), 3, DEFAULT_SETTINGS))), db);
    const [a, b] = await Promise.all([openTab('a'), openTab('b')]);
    for (const tab of [a, b]) expect(texts(tab)).toEqual([['first', 're first'], ['second', 're second']]);
    expect(await get(LEGACY_KEY, db)).toBeUndefined();
    expect((await get(INDEX_KEY, db)).order).toEqual(['p1', 'p2']);
    const [next] = a.store.getState().addPanes([DEFAULT_SETTINGS]);
    expect(next).toBe('p3-a');
    expect(a.notices).toEqual([]);
  });
});
