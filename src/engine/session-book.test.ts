// SessionBook and SessionRecord on their own: a turn ends once, history after replies, failures and
// reset, waiters, close deferred while a turn runs, a turn that could not start. No scheduler here.
import { describe, expect, it } from 'vitest';
import { SessionBook, type TurnOutcome, type TurnRecord } from './session-book';

const TEXT_ONLY = { promptTokenIds: [], outputTokenIds: [] };

function turnOf(requestId: string, text = ''): TurnRecord {
  return { requestId, text };
}

function ended(reason: TurnOutcome['reason'], extra: Partial<TurnOutcome> = {}): TurnOutcome {
  return { reason, ...TEXT_ONLY, ...extra };
}

describe('SessionRecord', () => {
  it('ends a turn exactly once: a second end changes nothing and tells no one again', async () => {
    const record = new SessionBook('t').create({ systemPrompt: 'S' });
    const turn = record.begin('Hi', (n) => turnOf(`a:${n}`, 'Hello'));
    let numResolved = 0;
    const waiter = record.waitForTurn().then((r) => (numResolved++, r));
    const result = record.end(turn, ended('eos', { historyTokenIds: [1, 2, 3] }));
    expect(result).toMatchObject({ sessionId: record.sessionId, requestId: 'a:1', text: 'Hello', finishReason: 'eos' });
    expect(record.end(turn, ended('error', { error: 'late' }))).toBeUndefined();
    expect(await waiter).toBe(result);
    expect(numResolved).toBe(1);
    expect(record.conversation()).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
    expect(record.historyTokenIds).toEqual([1, 2, 3]);
    expect(record.snapshot()).toMatchObject({ state: 'done', numTurns: 1, stats: { finishReason: 'eos' } });
    expect(record.snapshot().stats.error).toBeUndefined();
  });

  it('a turn that is not the one in progress cannot end it', () => {
    const record = new SessionBook('t').create();
    const first = record.begin('a', () => turnOf('r1'));
    record.end(first, ended('eos'));
    const second = record.begin('b', () => turnOf('r2'));
    expect(record.end(first, ended('cancelled'))).toBeUndefined();
    expect(record.active).toBe(second);
    expect(record.state).toBe('waiting');
  });

  it('a failed turn takes its user message out of the history and keeps the token history', () => {
    const record = new SessionBook('t').create({ history: [{ role: 'user', content: 'u0' }, { role: 'assistant', content: 'a0' }] });
    record.historyTokenIds = [7, 8];
    const turn = record.begin('doomed', () => turnOf('r1', 'half'));
    const result = record.end(turn, ended('error', { error: 'boom', historyTokenIds: [9] }));
    expect(result).toMatchObject({ finishReason: 'error', error: 'boom', text: 'half' });
    expect(record.messages).toEqual([
      { role: 'user', content: 'u0' },
      { role: 'assistant', content: 'a0' },
    ]);
    expect(record.historyTokenIds).toEqual([7, 8]);
    expect(record.snapshot()).toMatchObject({ state: 'error', stats: { finishReason: 'error', error: 'boom' } });
  });

  it('a turn of several messages (tool results, a user message) joins the history whole and leaves it whole when it fails', () => {
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    const record = new SessionBook('t').create({ history: [{ role: 'user', content: 'u0' }, { role: 'assistant', content: '', toolCalls: [call] }] });
    const messages = [{ role: 'tool' as const, content: 'r', toolCallId: 'c1' }, { role: 'user' as const, content: 'and?' }];
    const failed = record.begin(messages, () => turnOf('r1', 'half'));
    expect(record.conversation().map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    record.end(failed, ended('error', { error: 'boom' }));
    expect(record.messages).toEqual([{ role: 'user', content: 'u0' }, { role: 'assistant', content: '', toolCalls: [call] }]);
    expect(record.messages[1]!.toolCalls![0]).not.toBe(call); // the record's own copy
    const ok = record.begin(messages, () => turnOf('r2', 'done'));
    record.end(ok, ended('stop'));
    expect(record.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
  });

  it('a cancelled turn keeps its partial reply in the history', () => {
    const record = new SessionBook('t').create();
    const turn = record.begin('q', () => turnOf('r1', 'part'));
    record.end(turn, ended('cancelled'));
    expect(record.messages.at(-1)).toEqual({ role: 'assistant', content: 'part' });
    expect(record.state).toBe('cancelled');
  });

  it('reset during a turn returns it and discards its result from the fresh history; idle, it goes back to idle', async () => {
    const record = new SessionBook('t').create({ systemPrompt: 'S', history: [{ role: 'user', content: 'old' }] });
    const turn = record.begin('q', () => turnOf('r1', 'partial'));
    expect(record.reset()).toBe(turn);
    expect(record.state).toBe('waiting'); // the turn still runs until the executor ends it
    record.end(turn, ended('cancelled', { historyTokenIds: [1] }));
    expect(record.conversation()).toEqual([{ role: 'system', content: 'S' }]);
    expect(record.historyTokenIds).toEqual([]);
    expect((await record.waitForTurn()).text).toBe('partial');
    // the next turn is recorded again
    const next = record.begin('fresh', () => turnOf('r2', 'reply'));
    record.end(next, ended('eos'));
    expect(record.messages).toEqual([
      { role: 'user', content: 'fresh' },
      { role: 'assistant', content: 'reply' },
    ]);
    expect(record.reset()).toBeUndefined();
    expect(record.state).toBe('idle');
    expect(record.messages).toEqual([]);
  });

  it('refuses a second turn while one runs; a turn that cannot start leaves history and count as they were', () => {
    const record = new SessionBook('t').create();
    expect(() =>
      record.begin('x', () => {
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(record.messages).toEqual([]);
    expect(record.numTurns).toBe(0);
    expect(record.state).toBe('idle');
    record.begin('a', (n) => turnOf(`r${n}`));
    expect(() => record.begin('b', () => turnOf('r2'))).toThrow(/still generating/);
    expect(record.messages).toEqual([{ role: 'user', content: 'a' }]);
    expect(record.numTurns).toBe(1);
  });

  it('begin clears the last turn\'s counts and keeps the totals', () => {
    const record = new SessionBook('t').create();
    const turn = record.begin('a', () => turnOf('r1'));
    record.stats = { ...record.stats, tokensIn: 5, tokensOut: 3, cachedTokens: 2, totalTokensIn: 5, totalTokensOut: 3 };
    record.end(turn, ended('error', { error: 'x' }));
    record.begin('b', () => turnOf('r2'));
    expect(record.stats).toEqual({ tokensIn: 0, tokensOut: 0, cachedTokens: 0, totalTokensIn: 5, totalTokensOut: 3 });
  });

  it('waiting with no turn ever sent is refused; every waiter of a turn gets its one result', async () => {
    const record = new SessionBook('t').create();
    await expect(record.waitForTurn()).rejects.toThrow(/has no turn/);
    const turn = record.begin('a', () => turnOf('r1', 'x'));
    const waiters = [record.waitForTurn(), record.waitForTurn(), record.waitForTurn()];
    const result = record.end(turn, ended('length'));
    for (const waiter of waiters) expect(await waiter).toBe(result);
    expect(await record.waitForTurn()).toBe(result);
  });
});

describe('SessionBook', () => {
  it('numbers sessions with its prefix and checks options before recording anything', () => {
    const book = new SessionBook('r');
    expect(() => book.create({ maxNewTokens: 0 })).toThrow(/maxNewTokens/);
    const a = book.create({ seed: 42, stopStrings: ['\n'], ignoreEos: true, maxNewTokens: 9 });
    const b = book.create();
    expect([a.sessionId, b.sessionId]).toEqual(['r1', 'r2']);
    expect(a.settings).toMatchObject({ sampling: { seed: 42 }, stopStrings: ['\n'], ignoreEos: true, maxNewTokens: 9 });
    expect(b.settings).toMatchObject({ sampling: { temperature: 0, seed: 2 }, stopStrings: [], ignoreEos: false });
    expect(b.settings.maxNewTokens).toBeUndefined();
    expect(book.live().map((r) => r.sessionId)).toEqual(['r1', 'r2']);
  });

  it('close while a turn runs: the session is closed at once and leaves the book when its turn ends', async () => {
    const book = new SessionBook('s');
    const record = book.create();
    const turn = record.begin('a', () => turnOf('r1', 'bye'));
    const waiter = record.waitForTurn();
    expect(record.close()).toBe(turn);
    expect(book.has(record.sessionId)).toBe(false);
    expect(() => book.open(record.sessionId)).toThrow(/no session s1/);
    expect(book.live()).toEqual([]);
    expect(book.find(record.sessionId)).toBe(record); // still there for its turn's end
    expect(book.all()).toEqual([record]);
    record.end(turn, ended('cancelled'));
    expect((await waiter).text).toBe('bye');
    expect(book.find(record.sessionId)).toBeUndefined();
    expect(book.all()).toEqual([]);
  });

  it('close with no turn removes the session at once', () => {
    const book = new SessionBook('s');
    const record = book.create();
    expect(record.close()).toBeUndefined();
    expect(book.find(record.sessionId)).toBeUndefined();
    expect(() => book.open(record.sessionId)).toThrow(/no session/);
  });
});
