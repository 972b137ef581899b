// Tests of the session registry through the engine: turns and history, states, stats from an
// injected clock, cancel/reset/close, stop strings and token-id turns.
import { describe, expect, it } from 'vitest';
import { ByteTokenizer, type PlainChatTemplate, runToIdle } from './testing/test-support';
import { makeEngine } from './testing/test-engine';
import type { ChatMessage, ToolDefinition } from './types';

const tokenizer = new ByteTokenizer();
/** makeEngine's clock advances 1 ms each reading: the stats below are exact. */
const FAKE = { numBlocks: 200, blockSize: 4 };

describe('SessionRegistry', () => {
  it('continues from a given history exactly as if those turns had happened in the session', async () => {
    const engine = makeEngine({ fake: FAKE });
    const live = engine.createSession({ systemPrompt: 'Be brief.', maxNewTokens: 5 });
    engine.send(live, 'Hi');
    await runToIdle(engine);
    const first = await engine.waitForTurn(live);
    engine.send(live, 'More');
    await runToIdle(engine);
    const second = await engine.waitForTurn(live);

    const restored = engine.createSession({ systemPrompt: 'Be brief.', maxNewTokens: 5, history: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: first.text }] });
    engine.send(restored, 'More');
    await runToIdle(engine);
    expect((await engine.waitForTurn(restored)).promptTokenIds).toEqual(second.promptTokenIds);
    expect(() => engine.createSession({ history: [{ role: 'system' as 'user', content: 'x' }] })).toThrow(/a user, assistant or tool message/);
  });

  it("renders a turn of tool results with the session's tools and the assistant's calls; a refused turn changes nothing", async () => {
    const rendered: string[] = [];
    const template = {
      render(messages: ChatMessage[], addGenerationPrompt: boolean, tools?: readonly ToolDefinition[]): string {
        const list = tools ? `<|tools|>${tools.map((t) => t.function.name).join(',')}\n` : '';
        const text = list + messages.map((m) => `<|${m.role}|>${m.content}${m.toolCalls ? `[${m.toolCalls.map((c) => `${c.id}:${c.function.name}${c.function.arguments}`).join(';')}]` : ''}${m.toolCallId ? `(${m.toolCallId})` : ''}\n`).join('');
        rendered.push(text);
        return addGenerationPrompt ? `${text}<|assistant|>` : text;
      },
    };
    const engine = makeEngine({ fake: FAKE, chatTemplate: template });
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{"a":1}' } };
    const id = engine.createSession({ maxNewTokens: 3, tools: [{ type: 'function', function: { name: 'f' } }], history: [{ role: 'user', content: 'Q' }, { role: 'assistant', content: '', toolCalls: [call] }] });
    expect(() => engine.send(id, { messages: [] })).toThrow(/messages/);
    expect(() => engine.send(id, { messages: [{ role: 'tool', content: 'r', toolCallId: 'c1' }, { role: 'assistant', content: 'x' }] })).toThrow(/messages\[1\]/);
    expect(engine.sessions.messages(id)).toHaveLength(2);
    engine.send(id, { messages: [{ role: 'tool', content: 'R', toolCallId: 'c1' }] });
    await runToIdle(engine);
    const turn = await engine.waitForTurn(id);
    expect(tokenizer.decode(turn.promptTokenIds)).toBe('<|tools|>f\n<|user|>Q\n<|assistant|>[c1:f{"a":1}]\n<|tool|>R(c1)\n<|assistant|>');
    expect(engine.sessions.messages(id).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('renders the conversation with the chat template and records the reply in the history', async () => {
    const engine = makeEngine({ fake: FAKE });
    const id = engine.createSession({ systemPrompt: 'Be brief.', maxNewTokens: 5 });
    engine.send(id, 'Hi');
    await runToIdle(engine);
    const turn = await engine.waitForTurn(id);
    expect(tokenizer.decode(turn.promptTokenIds)).toBe('<|system|>Be brief.\n<|user|>Hi\n<|assistant|>');
    expect(turn.text).toBe(tokenizer.decode(turn.outputTokenIds));
    expect(turn.text).toHaveLength(5);
    expect(engine.sessions.messages(id)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: turn.text },
    ]);
    engine.send(id, 'More');
    await runToIdle(engine);
    const second = await engine.waitForTurn(id);
    expect(tokenizer.decode(second.promptTokenIds)).toBe(`<|system|>Be brief.\n<|user|>Hi\n<|assistant|>${turn.text}\n<|user|>More\n<|assistant|>`);
    expect(engine.sessions.get(id)).toMatchObject({ state: 'done', numTurns: 2, stats: { totalTokensOut: 10 } });
  });

  it('moves through waiting, prefill, decode and done, and derives stats from the clock', async () => {
    const engine = makeEngine({ fake: FAKE });
    const id = engine.createSession({ maxNewTokens: 4 });
    expect(engine.sessions.get(id).state).toBe('idle');
    engine.send(id, Array.from({ length: 30 }, () => 120));
    expect(engine.sessions.get(id).state).toBe('waiting');
    engine.scheduler.configure({ maxTokensPerStep: 16 }); // the 30-token prompt takes two chunks
    await engine.step();
    expect(engine.sessions.get(id).state).toBe('prefill');
    await engine.step();
    expect(engine.sessions.get(id).state).toBe('decode');
    await runToIdle(engine);
    const { state, stats } = engine.sessions.get(id);
    expect(state).toBe('done');
    expect(stats).toMatchObject({ tokensIn: 30, tokensOut: 4, finishReason: 'length' });
  });

  it('continues a token-id turn from the raw token history', async () => {
    const engine = makeEngine({ fake: FAKE });
    const id = engine.createSession({ maxNewTokens: 3 });
    engine.send(id, [65, 66, 67]);
    await runToIdle(engine);
    const first = await engine.waitForTurn(id);
    engine.send(id, [68]);
    await runToIdle(engine);
    const second = await engine.waitForTurn(id);
    expect(second.promptTokenIds).toEqual([65, 66, 67, ...first.outputTokenIds, 68]);
  });

  it('refuses a second send while a turn is running', () => {
    const engine = makeEngine({ fake: FAKE });
    const id = engine.createSession();
    engine.send(id, 'a');
    expect(() => engine.send(id, 'b')).toThrow(/still generating/);
  });

  it('cancel keeps the partial reply; reset forgets the history; close frees the blocks', async () => {
    const engine = makeEngine({ fake: FAKE });
    const a = engine.createSession({ maxNewTokens: 50 });
    const b = engine.createSession({ maxNewTokens: 50 });
    const c = engine.createSession({ maxNewTokens: 50 });
    for (const id of [a, b, c]) engine.send(id, 'question');
    for (let i = 0; i < 4; i++) await engine.step();
    engine.cancel(a);
    engine.resetSession(b);
    engine.closeSession(c);
    const event = await engine.step();
    expect(event?.finished.map((f) => [f.sessionId, f.reason])).toEqual([
      [a, 'cancelled'],
      [b, 'cancelled'],
      [c, 'cancelled'],
    ]);
    expect(event?.rows).toEqual([]);
    expect(engine.pool.stats().numUsed).toBe(0);
    const partial = await engine.waitForTurn(a);
    expect(partial.outputTokenIds).toHaveLength(4);
    expect(engine.sessions.messages(a).at(-1)).toEqual({ role: 'assistant', content: partial.text });
    expect(engine.sessions.messages(b)).toEqual([]);
    expect(engine.sessions.get(b).state).toBe('cancelled');
    expect(engine.sessions.has(c)).toBe(false);
    expect(() => engine.send(c, 'again')).toThrow(/no session/);
    expect(await engine.step()).toBeNull();
  });

  it('ends a turn at a stop string without showing it, and at EOS', async () => {
    // find what the fake model says, then stop on a piece of it
    const probe = makeEngine({ fake: FAKE });
    const p = probe.createSession({ maxNewTokens: 12 });
    probe.send(p, 'stop test');
    await runToIdle(probe);
    const full = (await probe.waitForTurn(p)).text;
    const stop = full.slice(5, 7);
    const cut = full.indexOf(stop);

    const engine = makeEngine({ fake: FAKE });
    const id = engine.createSession({ maxNewTokens: 12, stopStrings: [stop] });
    engine.send(id, 'stop test');
    const events = await runToIdle(engine);
    const turn = await engine.waitForTurn(id);
    expect(turn.finishReason).toBe('stop');
    expect(turn.text).toBe(full.slice(0, cut));
    const streamed = events.flatMap((e) => [...e.rows.map((r) => r.newText), ...e.finished.map((f) => f.newText)]).join('');
    expect(streamed).toBe(turn.text);

    const eos = makeEngine({ fake: { ...FAKE, eosEvery: 3 } });
    const e = eos.createSession({ maxNewTokens: 200 });
    eos.send(e, 'eos test');
    await runToIdle(eos);
    const eosTurn = await eos.waitForTurn(e);
    expect(eosTurn.finishReason).toBe('eos');
    expect(eosTurn.outputTokenIds.at(-1)).toBe(256);
  });
});

describe('SessionRegistry with a chat-aware tokenizer', () => {
  it('renders text turns through tokenizer.encodeChat when the tokenizer has it', async () => {
    const calls: number[] = [];
    const chatTokenizer = Object.assign(new ByteTokenizer(), {
      encodeChat(template: PlainChatTemplate, messages: Parameters<PlainChatTemplate['render']>[0], addGenerationPrompt: boolean): number[] {
        calls.push(messages.length);
        return [300 % 256, ...tokenizer.encode(template.render(messages, addGenerationPrompt))];
      },
    });
    const engine = makeEngine({ fake: { numBlocks: 100, blockSize: 4 }, tokenizer: chatTokenizer });
    const id = engine.createSession({ systemPrompt: 'S', maxNewTokens: 2 });
    engine.send(id, 'Hi');
    await runToIdle(engine);
    const turn = await engine.waitForTurn(id);
    expect(calls).toEqual([2]);
    expect(turn.promptTokenIds[0]).toBe(44);
    expect(tokenizer.decode(turn.promptTokenIds.slice(1))).toBe('<|system|>S\n<|user|>Hi\n<|assistant|>');
  });
});

describe('ignoreEos', () => {
  it('generates exactly maxNewTokens past any EOS', async () => {
    const engine = makeEngine({ fake: { ...FAKE, eosEvery: 2 } }); // EOS about every other sample
    const normal = engine.createSession({ maxNewTokens: 20 });
    const bench = engine.createSession({ maxNewTokens: 20, ignoreEos: true });
    engine.send(normal, 'Hi');
    engine.send(bench, 'Hi');
    await runToIdle(engine);
    expect((await engine.waitForTurn(normal)).finishReason).toBe('eos');
    const turn = await engine.waitForTurn(bench);
    expect(turn.finishReason).toBe('length');
    expect(turn.outputTokenIds).toHaveLength(20);
  });
});
