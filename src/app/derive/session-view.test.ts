// Tests for folding StepEvents into chat panes: streaming text, states, TTFT and decode tok/s,
// held-back text in finished events, resets during a turn, and untouched panes staying the same.
import { describe, expect, it } from 'vitest';
import { applyReceivedSteps, beginTurn, changeSettings, historyBeforeTurn, isActive, lastUserLine, latestReply, markCancelling, newSessionView, refuseTurn, resetView, rewindView, suspendView, type SessionView } from './session-view';
import { DEFAULT_SETTINGS, toSessionOptions } from './session-settings';
import { decodeRateSinceFirstToken, firstTokenStep, sendToFirstTokenMs, tokenEndTimes } from '../../protocol/metrics';
import { row, step } from '../../protocol/testing/step-fixtures';
import type { ReceivedStep } from './step-ring';

const rec = (event: ReceivedStep['event'], receivedAtMs: number): ReceivedStep => ({ event, receivedAtMs });

function panes(...views: SessionView[]): Map<string, SessionView> {
  return new Map(views.map((v) => [v.paneId, v]));
}

describe('applyReceivedSteps', () => {
  const sent = (paneId: string, engineId: string) => ({ ...beginTurn(newSessionView(paneId, paneId, DEFAULT_SETTINGS), 'hi', 1000), engineId });
  const byEngine = new Map([
    ['s1', 'p1'],
    ['s2', 'p2'],
  ]);

  it("shows why a pane waits, moves a preempted one back to waiting, and clears the reason when it rides", () => {
    let views: ReadonlyMap<string, SessionView> = panes(sent('p1', 's1'), sent('p2', 's2'));
    const waiting = (sessionId: string, reason: 'queued' | 'kv-full' | 'preempted') => ({ sessionId, requestId: `${sessionId}:1`, reason });
    views = applyReceivedSteps(views, byEngine, [rec(step(0, 0, 50, [row('s1', 'prefill', 32)], { waiting: [waiting('s2', 'kv-full')] }), 1060)]);
    expect(views.get('p2')).toMatchObject({ state: 'waiting', waitReason: 'kv-full' });
    views = applyReceivedSteps(views, byEngine, [rec(step(1, 50, 50, [row('s2', 'prefill', 32)], { waiting: [waiting('s1', 'preempted')] }), 1110)]);
    expect(views.get('p1')).toMatchObject({ state: 'waiting', waitReason: 'preempted' });
    expect(views.get('p2')!.state).toBe('prefill');
    expect(views.get('p2')!.waitReason).toBeUndefined();
    // an unchanged reason leaves the map as it is
    const same = applyReceivedSteps(views, byEngine, [rec(step(2, 100, 50, [], { waiting: [waiting('s1', 'preempted')] }), 1160)]);
    expect(same).toBe(views);
  });

  it("keeps each reply token's logprob with the reply, in order, across steps; a pane without logprobs keeps none", () => {
    const lp = (id: number, token: string, logprob: number) => ({ id, token, logprob, top: [{ id, token, logprob }] });
    let views: ReadonlyMap<string, SessionView> = panes(sent('p1', 's1'), sent('p2', 's2'));
    views = applyReceivedSteps(views, byEngine, [
      rec(step(0, 0, 50, [row('s1', 'prefill', 8, [72], 'H', { newLogprobs: [lp(72, 'H', -0.1)] }), row('s2', 'prefill', 8, [72], 'H')]), 1060),
      // a verify row adds two tokens at once; a step mid-character adds a token but no text yet
      rec(step(1, 50, 50, [row('s1', 'decode', 3, [105, 33], 'i!', { newLogprobs: [lp(105, 'i', -0.5), lp(33, '!', -2)] })]), 1110),
      rec(step(2, 100, 50, [row('s1', 'decode', 1, [226], '', { newLogprobs: [lp(226, '\ufffd', -3)] })]), 1160),
    ]);
    const line = views.get('p1')!.lines.at(-1)!;
    expect(line.text).toBe('Hi!');
    expect(line.tokens!.map((t) => [t.id, t.logprob])).toEqual([[72, -0.1], [105, -0.5], [33, -2], [226, -3]]);
    expect(views.get('p2')!.lines.at(-1)).toEqual({ role: 'assistant', text: 'H' });
    // the next turn's reply starts its own tokens
    const next = beginTurn(views.get('p1')!, 'again', 2000);
    expect(next.lines.at(-1)).toEqual({ role: 'assistant', text: '' });
  });

  it('streams text, moves through prefill and decode, and measures TTFT and decode tok/s', () => {
    let views: ReadonlyMap<string, SessionView> = panes(sent('p1', 's1'));
    views = applyReceivedSteps(views, byEngine, [rec(step(0, 0, 50, [row('s1', 'prefill', 32)]), 1060)]);
    expect(views.get('p1')!.state).toBe('prefill');
    expect(views.get('p1')!.ttftMs).toBeUndefined();
    views = applyReceivedSteps(views, byEngine, [
      rec(step(1, 50, 50, [row('s1', 'prefill', 8, [72], 'He')]), 1110),
      rec(step(2, 100, 100, [row('s1', 'decode', 1, [108], 'l')]), 1210),
      rec(step(3, 200, 100, [row('s1', 'decode', 1, [108], 'l')]), 1310),
    ]);
    const view = views.get('p1')!;
    expect(view.state).toBe('decode');
    expect(latestReply(view)).toBe('Hell');
    expect(view.ttftMs).toBe(110);
    expect(view.numOutputTokens).toBe(3);
    expect(view.numDecodeTokens).toBe(2);
    // 2 decode tokens between the first token's step end (100) and the last one's (300).
    expect(view.tokensPerSec).toBe(10);
  });

  it("shows the metrics module's TTFT and decode rate, read off the same steps all at once", () => {
    const records = [
      rec(step(0, 0, 40, [row('s1', 'prefill', 16), row('s2', 'decode', 1, [9])]), 1045),
      rec(step(1, 41, 30, [row('s1', 'prefill', 16, [72], 'H'), row('s2', 'decode', 1, [9])]), 1080),
      rec(step(2, 72, 12, [row('s1', 'decode', 1, [105], 'i'), row('s2', 'decode', 1, [9])]), 1090),
      rec(step(3, 85, 7, [row('s1', 'decode', 1, [33], '!')]), 1099),
      rec(step(4, 93, 9, [row('s1', 'decode', 1, [33], '!')]), 1110),
    ];
    let views: ReadonlyMap<string, SessionView> = panes(sent('p1', 's1'));
    for (const r of records) views = applyReceivedSteps(views, byEngine, [r]);
    const view = views.get('p1')!;
    const steps = records.map((r) => ({ ...r.event, receivedAtMs: r.receivedAtMs }));
    const ends = tokenEndTimes(steps, 's1');
    expect(view.ttftMs).toBe(sendToFirstTokenMs(1000, firstTokenStep(steps, 's1')!.receivedAtMs));
    expect(view.tokensPerSec).toBe(decodeRateSinceFirstToken(3, ends[0]!, ends.at(-1)!));
    expect(view.tokensPerSec).toBeCloseTo(3000 / (102 - 71), 9);
  });

  it('appends held-back text of a finished request and ends in the state its reason says', () => {
    const views = applyReceivedSteps(panes(sent('p1', 's1'), sent('p2', 's2')), byEngine, [
      rec(
        step(0, 0, 10, [row('s1', 'decode', 1, [1], 'ok', { finishReason: 'eos' }), row('s2', 'decode', 1, [])], {
          finished: [
            { sessionId: 's1', requestId: 's1:1', reason: 'eos', newText: '!' },
            { sessionId: 's2', requestId: 's2:1', reason: 'cancelled', newText: '' },
          ],
        }),
        20,
      ),
    ]);
    expect(latestReply(views.get('p1')!)).toBe('ok!');
    expect(views.get('p1')!.state).toBe('done');
    expect(views.get('p2')!.state).toBe('cancelled');
    expect(isActive(views.get('p2')!)).toBe(false);
  });

  it('shows "cancelling" from the click until the turn ends, through the steps still running', () => {
    const cancelling = markCancelling(sent('p1', 's1'));
    expect(cancelling.cancelling).toBe(true);
    expect(markCancelling(cancelling)).toBe(cancelling);
    const during = applyReceivedSteps(panes(cancelling), byEngine, [rec(step(0, 0, 10, [row('s1', 'prefill', 512)]), 5)]);
    expect(during.get('p1')).toMatchObject({ state: 'prefill', cancelling: true });
    const after = applyReceivedSteps(during, byEngine, [rec(step(1, 10, 10, [], { finished: [{ sessionId: 's1', requestId: 's1:1', reason: 'cancelled', newText: '' }] }), 25)]);
    expect(after.get('p1')).toMatchObject({ state: 'cancelled', cancelling: undefined });
    // Nothing to cancel on an idle pane; a new turn starts without the mark.
    const idle = newSessionView('p3', '#3', DEFAULT_SETTINGS);
    expect(markCancelling(idle)).toBe(idle);
    expect(beginTurn(cancelling, 'again', 30).cancelling).toBeUndefined();
  });

  it('shows an engine error on its pane', () => {
    const views = applyReceivedSteps(panes(sent('p1', 's1')), byEngine, [
      rec(step(0, 0, 10, [], { finished: [{ sessionId: 's1', requestId: 's1:1', reason: 'error', newText: '', error: 'prompt too long' }] }), 5),
    ]);
    expect(views.get('p1')!.state).toBe('error');
    expect(views.get('p1')!.error).toBe('prompt too long');
  });

  it('returns the same map when no pane is concerned, and keeps untouched panes identical', () => {
    const start = panes(sent('p1', 's1'), sent('p2', 's2'));
    expect(applyReceivedSteps(start, byEngine, [rec(step(0, 0, 10, [row('s9', 'decode', 1, [1], 'x')]), 5)])).toBe(start);
    const next = applyReceivedSteps(start, byEngine, [rec(step(0, 0, 10, [row('s1', 'decode', 1, [1], 'x')]), 5)]);
    expect(next).not.toBe(start);
    expect(next.get('p2')).toBe(start.get('p2'));
    expect(start.get('p1')!.lines[1].text).toBe('');
  });

  it('drops a reset turn’s late tokens and frees the pane when its cancellation arrives', () => {
    let views: ReadonlyMap<string, SessionView> = panes(resetView(sent('p1', 's1')));
    expect(views.get('p1')!.lines).toEqual([]);
    expect(isActive(views.get('p1')!)).toBe(true);
    views = applyReceivedSteps(views, byEngine, [
      rec(step(0, 0, 10, [row('s1', 'decode', 1, [5], 'late')], { finished: [{ sessionId: 's1', requestId: 's1:1', reason: 'cancelled', newText: 'tail' }] }), 5),
    ]);
    const view = views.get('p1')!;
    expect(view.lines).toEqual([]);
    expect(view.state).toBe('idle');
    expect(isActive(view)).toBe(false);
  });
});

describe('pane transitions', () => {
  it('resets an idle pane at once', () => {
    const base = { ...newSessionView('p1', '#1', DEFAULT_SETTINGS), engineId: 's1', state: 'done' as const };
    expect(resetView(base)).toMatchObject({ state: 'idle', discarding: false, engineId: 's1', lines: [] });
  });

  it('rewinds to before a user line (regenerate, edit): later lines go, the rest becomes history', () => {
    const lines = [
      { role: 'user' as const, text: 'a' },
      { role: 'assistant' as const, text: 'b' },
      { role: 'user' as const, text: 'c' },
      { role: 'assistant' as const, text: 'd' },
    ];
    const view: SessionView = { ...newSessionView('p1', '#1', DEFAULT_SETTINGS), engineId: 's1', state: 'done', lines, numOutputTokens: 3 };
    expect(lastUserLine(view)).toBe(2);
    const rewound = rewindView(view, 2);
    expect(rewound.engineId).toBeUndefined();
    expect(rewound).toMatchObject({ state: 'idle', restoreHistory: true, numOutputTokens: 0, lines: lines.slice(0, 2) });
    expect(historyBeforeTurn(beginTurn(rewound, 'c2', 0))).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
    expect(rewindView(view, 0)).toMatchObject({ lines: [], restoreHistory: false });
    expect(lastUserLine(newSessionView('p2', '#2', DEFAULT_SETTINGS))).toBe(-1);
  });

  it('takes new settings between turns: the engine session goes, the transcript becomes its successor\'s history', () => {
    const lines = [
      { role: 'user' as const, text: 'a' },
      { role: 'assistant' as const, text: 'b' },
    ];
    const view: SessionView = { ...newSessionView('p1', '#1', DEFAULT_SETTINGS), engineId: 's1', state: 'done', lines };
    const changed = changeSettings(view, { ...DEFAULT_SETTINGS, maxNewTokens: 5 });
    expect(changed.engineId).toBeUndefined();
    expect(changed).toMatchObject({ settings: { maxNewTokens: 5 }, restoreHistory: true, lines });
    expect(historyBeforeTurn(beginTurn(changed, 'c', 0))).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]);
    // The same settings keep the session; a running turn keeps its settings.
    expect(changeSettings(view, { ...DEFAULT_SETTINGS })).toBe(view);
    const running = beginTurn(view, 'c', 0);
    expect(changeSettings(running, { ...DEFAULT_SETTINGS, topK: 1 })).toBe(running);
    // A pane that never sent anything just takes them.
    const fresh = changeSettings(newSessionView('p2', '#2', DEFAULT_SETTINGS), { ...DEFAULT_SETTINGS, temperature: 0 });
    expect(fresh).toMatchObject({ settings: { temperature: 0 }, restoreHistory: false });
  });

  it('hands a message refused before its first token back to the composer, without an empty bubble', () => {
    const base: SessionView = { ...beginTurn({ ...newSessionView('p1', '#1', DEFAULT_SETTINGS), engineId: 's1', lines: [{ role: 'user', text: 'x' }, { role: 'assistant', text: 'y' }] }, 'long text', 0) };
    const finished = step(1, 0, 1, [], { finished: [{ sessionId: 's1', requestId: 's1:1', reason: 'error', error: 'prompt of 20000 tokens exceeds the KV capacity of 4096', newText: '' }] });
    const refused = applyReceivedSteps(new Map([['p1', base]]), new Map([['s1', 'p1']]), [{ event: finished, receivedAtMs: 1 }]).get('p1')!;
    expect(refused.lines.map((l) => l.text)).toEqual(['x', 'y']);
    expect(refused).toMatchObject({ state: 'error', returnedDraft: 'long text', error: expect.stringContaining('exceeds') });
    expect(refuseTurn(newSessionView('p2', '#2', DEFAULT_SETTINGS), 'no').returnedDraft).toBeUndefined();
  });

  it('maps settings to session options, leaving the seed to the engine when unset', () => {
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, systemPrompt: ' ', seed: null })).toEqual({
      sampling: { temperature: 0.7, topP: 0.95, topK: 40 },
      maxNewTokens: 128,
    });
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, systemPrompt: 'Be brief.', seed: 7 }).sampling?.seed).toBe(7);
    expect(toSessionOptions({ ...DEFAULT_SETTINGS, systemPrompt: 'Be brief.' }).systemPrompt).toBe('Be brief.');
  });
});

describe('engine restart', () => {
  it('keeps the transcript, ends a cut-off turn with an error, and hands the history to the next turn', () => {
    const base = { ...newSessionView('p1', '#1', DEFAULT_SETTINGS), engineId: 's1' };
    const answered: SessionView = { ...base, state: 'decode', sentAtMs: 1, lines: [{ role: 'user', text: 'hi' }, { role: 'assistant', text: 'hello' }, { role: 'user', text: 'more' }, { role: 'assistant', text: 'and' }] };
    const suspended = suspendView(answered);
    expect(suspended.engineId).toBeUndefined();
    expect(suspended).toMatchObject({ state: 'error', restoreHistory: true, lines: answered.lines });
    const next = beginTurn(suspended, 'again', 5);
    // the cut-off reply is kept as it streamed; the turn just begun is not history yet
    expect(historyBeforeTurn(next)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'more' },
      { role: 'assistant', content: 'and' },
    ]);
    expect(suspendView({ ...base, state: 'done', lines: [] }).state).toBe('done');
  });
});
