// Tests for the sessions store: panes in order, engine bindings, steps folded into the right
// pane, Maps replaced rather than mutated, and panes detached when the model changes.
import { beforeEach, describe, expect, it } from 'vitest';
import { beginTurn, latestReply, newSessionView } from '../derive/session-view';
import { DEFAULT_SETTINGS } from '../derive/session-settings';
import { row, step } from '../../protocol/testing/step-fixtures';
import { useSessionsStore } from './sessions-store';

const initial = useSessionsStore.getState();

describe('useSessionsStore', () => {
  beforeEach(() => useSessionsStore.setState(initial, true));

  it('opens panes in order with numbered labels, or prefixed ones for presets', () => {
    const ids = useSessionsStore.getState().addPanes([DEFAULT_SETTINGS, DEFAULT_SETTINGS]);
    const niah = useSessionsStore.getState().addPanes([DEFAULT_SETTINGS], { labelPrefix: 'N', niah: [{ code: 'OAK-1000', numLines: 3, allCodes: ['OAK-1000'] }] });
    const { order, views } = useSessionsStore.getState();
    expect(order).toEqual([...ids, ...niah]);
    expect(ids.map((id) => views.get(id)!.label)).toEqual(['#1', '#2']);
    expect(views.get(niah[0])!.label).toBe('N1');
    expect(views.get(niah[0])!.niah?.code).toBe('OAK-1000');
  });

  it('routes a step to the pane bound to its engine session and replaces, not mutates, the map', () => {
    const [a, b] = useSessionsStore.getState().addPanes([DEFAULT_SETTINGS, DEFAULT_SETTINGS]);
    useSessionsStore.getState().bindEngine(a, 's7');
    useSessionsStore.getState().bindEngine(b, 's8');
    useSessionsStore.getState().updateView(a, (v) => beginTurn(v, 'hi', 0));
    useSessionsStore.getState().updateView(b, (v) => beginTurn(v, 'yo', 0));
    const before = useSessionsStore.getState().views;
    const viewB = before.get(b);
    useSessionsStore.getState().applyRecords([{ event: step(0, 0, 10, [row('s7', 'prefill', 4, [65], 'A')]), receivedAtMs: 5 }]);
    const after = useSessionsStore.getState().views;
    expect(after).not.toBe(before);
    expect(latestReply(before.get(a)!)).toBe('');
    expect(latestReply(after.get(a)!)).toBe('A');
    expect(after.get(b)).toBe(viewB);
  });

  it('forgets a closed pane and its binding', () => {
    const [a] = useSessionsStore.getState().addPanes([DEFAULT_SETTINGS]);
    useSessionsStore.getState().bindEngine(a, 's1');
    useSessionsStore.getState().removePane(a);
    const { order, views, paneByEngineId } = useSessionsStore.getState();
    expect(order).toEqual([]);
    expect(views.size).toBe(0);
    expect(paneByEngineId.size).toBe(0);
  });

  it('detaches every pane from its engine session when the model changes, keeping its transcript', () => {
    const [a] = useSessionsStore.getState().addPanes([{ ...DEFAULT_SETTINGS, temperature: 0 }]);
    useSessionsStore.getState().bindEngine(a, 's1');
    useSessionsStore.getState().updateView(a, (v) => beginTurn(v, 'hi', 0));
    useSessionsStore.getState().detachAll('the model changed during this turn');
    const view = useSessionsStore.getState().views.get(a)!;
    expect(view.engineId).toBeUndefined();
    expect(view.lines.map((l) => l.text)).toEqual(['hi', '']);
    expect(view.restoreHistory).toBe(true);
    expect(view.error).toBe('the model changed during this turn');
    expect(view.settings.temperature).toBe(0);
    expect(useSessionsStore.getState().paneByEngineId.size).toBe(0);
  });

  it('unbinds one pane from its engine session and restores saved panes after open ones', () => {
    const [a] = useSessionsStore.getState().addPanes([DEFAULT_SETTINGS]);
    useSessionsStore.getState().bindEngine(a, 's9');
    useSessionsStore.getState().unbindEngine(a);
    expect(useSessionsStore.getState().views.get(a)!.engineId).toBeUndefined();
    expect(useSessionsStore.getState().paneByEngineId.has('s9')).toBe(false);
    const saved = newSessionView('p40', '#40', DEFAULT_SETTINGS);
    useSessionsStore.getState().restore(['p40', a], new Map([['p40', saved], [a, saved]]), 41, DEFAULT_SETTINGS);
    const { order, nextNumber } = useSessionsStore.getState();
    expect(order.slice(-2)).toEqual([a, 'p40']);
    expect(nextNumber).toBe(41);
  });
});
