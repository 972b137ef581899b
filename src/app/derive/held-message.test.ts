// Tests for a message held while a model loads: held once per pane and only in an idle one,
// released without touching the transcript, handed back with the load's reason, oldest first.
import { describe, expect, it } from 'vitest';
import { heldInOrder, holdForModel, releaseHeld, returnHeld } from './held-message';
import { beginTurn, isActive, isBusy, newSessionView, suspendView, type SessionView } from './session-view';
import { DEFAULT_SETTINGS } from './session-settings';

const idle = (paneId: string): SessionView => newSessionView(paneId, paneId, DEFAULT_SETTINGS);

describe('held messages', () => {
  it('holds a message in an idle pane without starting a turn: the transcript and state stay, the pane is busy', () => {
    const before: SessionView = { ...idle('p1'), state: 'error', error: 'No model is loaded yet.', lines: [{ role: 'user', text: 'a' }, { role: 'assistant', text: 'b' }] };
    const held = holdForModel(before, 'hello', 42);
    expect(held.waitingForModel).toEqual({ text: 'hello', heldAtMs: 42 });
    expect(held.lines).toBe(before.lines);
    expect(held.state).toBe('error');
    expect(held.error).toBeUndefined();
    expect(isActive(held)).toBe(false);
    expect(isBusy(held)).toBe(true);
    // One per pane; a running turn or an empty message holds nothing.
    expect(holdForModel(held, 'second', 43)).toBe(held);
    const running = beginTurn(idle('p2'), 'x', 0);
    expect(holdForModel(running, 'y', 1)).toBe(running);
    expect(holdForModel(idle('p3'), '  ', 1).waitingForModel).toBeUndefined();
  });

  it('releases and returns: released leaves the pane as before, returned puts the text in the composer with the reason', () => {
    const before = idle('p1');
    const held = holdForModel(before, 'hello', 1);
    expect(releaseHeld(held)).toEqual(before);
    expect(releaseHeld(before)).toBe(before);
    const returned = returnHeld(held, 'Could not load x: 404');
    expect(returned).toMatchObject({ state: 'error', error: 'Could not load x: 404', returnedDraft: 'hello', lines: [] });
    expect(returned.waitingForModel).toBeUndefined();
    expect(returnHeld(before, 'why')).toBe(before);
  });

  it('survives the engine sessions going away (a new model): a held message is not a turn to cut', () => {
    const held = holdForModel({ ...idle('p1'), engineId: 's1', lines: [{ role: 'user', text: 'a' }, { role: 'assistant', text: 'b' }] }, 'next', 1);
    const suspended = suspendView(held, 'cut');
    expect(suspended.waitingForModel).toEqual({ text: 'next', heldAtMs: 1 });
    expect(suspended.error).toBeUndefined();
    expect(suspended.engineId).toBeUndefined();
    expect(suspended.restoreHistory).toBe(true);
  });

  it('lists holding panes oldest message first, ties in pane order', () => {
    const views = new Map<string, SessionView>([
      ['p1', holdForModel(idle('p1'), 'third', 30)],
      ['p2', idle('p2')],
      ['p3', holdForModel(idle('p3'), 'first', 10)],
      ['p4', holdForModel(idle('p4'), 'tie a', 20)],
      ['p5', holdForModel(idle('p5'), 'tie b', 20)],
    ]);
    expect(heldInOrder(['p1', 'p2', 'p3', 'p4', 'p5'], views)).toEqual(['p3', 'p4', 'p5', 'p1']);
    expect(heldInOrder(['p2', 'gone'], views)).toEqual([]);
  });
});
