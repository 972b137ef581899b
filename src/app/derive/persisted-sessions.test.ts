// Tests for the panes saved across reloads: what is kept (settings, transcripts, labels), what
// is not (compare panes, empty replies), a message held for the model kept as a draft, and
// malformed or old saved data read as nothing.
import { describe, expect, it } from 'vitest';
import { fromPersisted, PERSIST_VERSION, toPersisted } from './persisted-sessions';
import { beginTurn, historyBeforeTurn, newSessionView, type SessionView } from './session-view';
import { DEFAULT_SETTINGS } from './session-settings';

const lines = [
  { role: 'user' as const, text: 'hi' },
  { role: 'assistant' as const, text: 'there' },
];

describe('persisted sessions', () => {
  it('round-trips panes as views whose next message carries the transcript as history', () => {
    const a: SessionView = { ...newSessionView('p3', '#3', { ...DEFAULT_SETTINGS, temperature: 0 }), engineId: 's7', state: 'done', lines };
    const b: SessionView = { ...newSessionView('p4', 'B1', DEFAULT_SETTINGS), tag: 'compare-batched' };
    const saved = toPersisted(['p3', 'p4'], new Map([['p3', a], ['p4', b]]), 5, DEFAULT_SETTINGS);
    expect(saved.panes.map((p) => p.paneId)).toEqual(['p3']);
    const back = fromPersisted(JSON.parse(JSON.stringify(saved)))!;
    expect(back.order).toEqual(['p3']);
    expect(back.nextNumber).toBe(5);
    const view = back.views.get('p3')!;
    expect(view.engineId).toBeUndefined();
    expect(view).toMatchObject({ label: '#3', restoreHistory: true, lines, settings: { temperature: 0 } });
    expect(historyBeforeTurn(beginTurn(view, 'again', 0))).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'there' },
    ]);
  });

  it('saves a streaming reply as far as it got and drops an empty one', () => {
    const streaming = beginTurn({ ...newSessionView('p1', '#1', DEFAULT_SETTINGS), lines }, 'more', 0);
    expect(toPersisted(['p1'], new Map([['p1', streaming]]), 2, DEFAULT_SETTINGS).panes[0].lines.map((l) => l.text)).toEqual(['hi', 'there', 'more']);
  });

  it('keeps a message that waited for the model as the composer\'s draft after the reload', () => {
    const held: SessionView = { ...newSessionView('p1', '#1', DEFAULT_SETTINGS), state: 'done', lines, waitingForModel: { text: 'queued one', heldAtMs: 5 } };
    const saved = toPersisted(['p1'], new Map([['p1', held]]), 2, DEFAULT_SETTINGS);
    expect(saved.panes[0].lines).toEqual(lines);
    const view = fromPersisted(JSON.parse(JSON.stringify(saved)))!.views.get('p1')!;
    expect(view.returnedDraft).toBe('queued one');
    expect(view.waitingForModel).toBeUndefined();
    expect(fromPersisted({ version: PERSIST_VERSION, panes: [{ paneId: 'p2', label: '#2', draft: 7 }] })!.views.get('p2')!.returnedDraft).toBeUndefined();
  });

  it('reads malformed, foreign or old data as nothing, and bad fields as defaults', () => {
    expect(fromPersisted(undefined)).toBeNull();
    expect(fromPersisted({ version: PERSIST_VERSION + 1, panes: [] })).toBeNull();
    expect(fromPersisted({ version: PERSIST_VERSION, panes: 'x' })).toBeNull();
    const back = fromPersisted({
      version: PERSIST_VERSION,
      nextNumber: 'x',
      panes: [{ paneId: 'p9', label: '#9', settings: { temperature: 'hot', seed: 3 }, lines: [{ role: 'system', text: 'x' }, { role: 'user', text: 'ok' }, 7] }, { paneId: 'p9', label: 'dup' }, null],
    })!;
    expect(back.order).toEqual(['p9']);
    expect(back.nextNumber).toBe(10);
    expect(back.views.get('p9')).toMatchObject({ settings: { ...DEFAULT_SETTINGS, seed: 3 }, lines: [{ role: 'user', text: 'ok' }] });
  });
});
