// ServerHost's sessions against a fake OpenAI server (testing/fake-openai-server.ts), no llama-server:
// what each completion is sent as history after replies, failures, reset and close, and who is told.
import { describe, expect, it } from 'vitest';
import type { StepEvent } from '../protocol/events';
import { ServerHost } from './server-host';
import { fakeOpenAiServer, type FakeOpenAiServer } from './testing/fake-openai-server';

async function connected(): Promise<{ host: ServerHost; server: FakeOpenAiServer; events: StepEvent[] }> {
  const server = fakeOpenAiServer();
  const host = new ServerHost({ fetchFn: server.fetchFn, sampleEveryMs: 5 });
  const events: StepEvent[] = [];
  await host.subscribe((event) => events.push(event));
  await host.loadModel({ kind: 'server', baseUrl: 'http://fake.test' });
  return { host, server, events };
}

describe('ServerHost sessions', () => {
  it('sends the conversation so far, system prompt first, and records each reply', async () => {
    const { host, server } = await connected();
    const id = await host.createSession({ systemPrompt: 'Be brief.', history: [{ role: 'user', content: 'Before' }, { role: 'assistant', content: 'Yes' }] });
    await host.send(id, 'Hi');
    const first = await server.nextCompletion();
    first.token('Hel');
    first.token('lo');
    first.finish();
    expect(await host.waitForTurn(id)).toMatchObject({ sessionId: id, text: 'Hello', finishReason: 'eos' });
    await host.send(id, 'More');
    const second = await server.nextCompletion();
    expect(second.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Before' },
      { role: 'assistant', content: 'Yes' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'user', content: 'More' },
    ]);
    second.finish('length');
    await host.waitForTurn(id);
    expect(await host.getSession(id)).toMatchObject({ state: 'done', numTurns: 2, stats: { tokensOut: 0, totalTokensOut: 2, finishReason: 'length' } });
  });

  it("forwards penalties and logit_bias in the server's names; refuses logprobs, which its text stream cannot carry", async () => {
    const { host, server } = await connected();
    const id = await host.createSession({ sampling: { frequencyPenalty: 0.5, presencePenalty: -1, repetitionPenalty: 1.2, logitBias: { 7: -100 } } });
    await host.send(id, 'Hi');
    const turn = await server.nextCompletion();
    expect(turn.body).toMatchObject({ frequency_penalty: 0.5, presence_penalty: -1, logit_bias: { 7: -100 } });
    expect(turn.body.repetition_penalty ?? turn.body.repeat_penalty).toBe(1.2); // vLLM's name, or llama.cpp's
    turn.finish();
    await host.waitForTurn(id);
    await expect(host.createSession({ sampling: { logprobs: 2 } })).rejects.toThrow(/sampling.logprobs/);
  });

  it('refuses tools, tool turns in the history and turns of tool results: its text stream would lose the calls', async () => {
    const { host } = await connected();
    await expect(host.createSession({ tools: [{ type: 'function', function: { name: 'f' } }] })).rejects.toThrow(/^tools/);
    const call = { id: 'c', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    await expect(host.createSession({ history: [{ role: 'user', content: 'q' }, { role: 'assistant', content: '', toolCalls: [call] }] })).rejects.toThrow(/history\[1\]/);
    const id = await host.createSession();
    await expect(host.send(id, { messages: [{ role: 'tool', content: 'r', toolCallId: 'c' }] })).rejects.toThrow(/tool results/);
  });

  it('forwards JSON mode and JSON schemas as response_format; refuses grammars and regexes, which it cannot forward', async () => {
    const { host, server } = await connected();
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const id = await host.createSession({ sampling: { constraint: { kind: 'json_schema', schema: JSON.stringify(schema) } } });
    await host.send(id, 'Hi');
    const turn = await server.nextCompletion();
    expect(turn.body).toMatchObject({ response_format: { type: 'json_schema', json_schema: { schema } } });
    turn.finish();
    await host.waitForTurn(id);
    const json = await host.createSession({ sampling: { constraint: { kind: 'json_object' } } });
    await host.send(json, 'Hi');
    const jsonTurn = await server.nextCompletion();
    expect(jsonTurn.body).toMatchObject({ response_format: { type: 'json_object' } });
    jsonTurn.finish();
    await host.waitForTurn(json);
    await expect(host.createSession({ sampling: { constraint: { kind: 'regex', pattern: 'a+' } } })).rejects.toThrow(/sampling.constraint must be json_object or json_schema/);
    await expect(host.createSession({ sampling: { constraint: { kind: 'ebnf', grammar: 'root ::= "a"' } } })).rejects.toThrow(/sampling.constraint/);
  });

  it('a failed turn ends with its error and takes its user message out of the history', async () => {
    const { host, server } = await connected();
    const id = await host.createSession({ systemPrompt: 'S' });
    server.refuseNext(500, 'the model fell over');
    await host.send(id, 'doomed');
    const failed = await host.waitForTurn(id);
    expect(failed.finishReason).toBe('error');
    expect(failed.error).toMatch(/the model fell over/);
    expect(await host.getSession(id)).toMatchObject({ state: 'error', stats: { finishReason: 'error', error: failed.error } });
    await host.send(id, 'again');
    const next = await server.nextCompletion();
    expect(next.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'again' },
    ]);
    next.finish();
    expect((await host.waitForTurn(id)).finishReason).toBe('eos');
  });

  it('every waiter gets the one result; waiting on a session that never sent is refused', async () => {
    const { host, server } = await connected();
    const id = await host.createSession();
    await expect(host.waitForTurn(id)).rejects.toThrow(/has no turn/);
    await host.send(id, 'Hi');
    await expect(host.send(id, 'again')).rejects.toThrow(/still generating/);
    const waiters = [host.waitForTurn(id), host.waitForTurn(id)];
    const completion = await server.nextCompletion();
    completion.token('ok');
    completion.finish();
    const [a, b] = await Promise.all(waiters);
    expect(a).toBe(b);
    expect(await host.waitForTurn(id)).toBe(a); // idle: the last result at once
  });

  it('reset during a turn aborts it and keeps its partial reply out of the fresh history', async () => {
    const { host, server } = await connected();
    const id = await host.createSession({ systemPrompt: 'S' });
    await host.send(id, 'first');
    const running = await server.nextCompletion();
    running.token('partial');
    await host.resetSession(id);
    expect((await host.waitForTurn(id)).finishReason).toBe('cancelled');
    expect(running.aborted).toBe(true);
    await host.send(id, 'second');
    const next = await server.nextCompletion();
    expect(next.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'second' },
    ]);
    next.finish();
    await host.waitForTurn(id);
  });

  it('close during a turn aborts it; its waiter still gets the result, then the session is gone', async () => {
    const { host, server, events } = await connected();
    const id = await host.createSession();
    await host.send(id, 'Hi');
    const running = await server.nextCompletion();
    const waiter = host.waitForTurn(id);
    await host.closeSession(id);
    expect(running.aborted).toBe(true);
    expect((await waiter).finishReason).toBe('cancelled');
    expect(events.flatMap((e) => e.finished)).toEqual([expect.objectContaining({ sessionId: id, reason: 'cancelled' })]);
    await expect(host.getSession(id)).rejects.toThrow(/no session/);
    await expect(host.waitForTurn(id)).rejects.toThrow(/no session/);
  });

  it('serialized mode: a turn cancelled while queued ends without a request; unload ends the running one', async () => {
    const { host, server } = await connected();
    await host.setMode('serialized');
    const [a, b] = [await host.createSession(), await host.createSession()];
    await host.send(a, 'one');
    await host.send(b, 'two');
    await server.nextCompletion();
    await host.cancel(b);
    expect((await host.waitForTurn(b)).finishReason).toBe('cancelled');
    expect(server.completions).toHaveLength(1);
    await host.unloadModel();
    expect(server.completions[0]!.aborted).toBe(true);
    expect(server.completions).toHaveLength(1);
    expect(await host.currentModel()).toBeNull();
  });
});
