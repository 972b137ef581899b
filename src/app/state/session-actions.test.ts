// Tests for messages sent while a model loads, through the real actions and stores over a fake
// engine client: held and shown, sent oldest first when the load ends, handed back with the
// load's reason when it fails, dropped by cancel, close and stop all; the same on the first load;
// a pane's response format, logprobs and penalties in the session it creates, a bad schema refused;
// a closed pane's composer draft forgotten.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { getEngineClient } from '../engine-client';
import { modelInfo, type FakeEngineClient } from '../testing/fake-engine-client';
import { beginTurn } from '../derive/session-view';
import { DEFAULT_SETTINGS } from '../derive/session-settings';
import { loadModel } from './model-actions';
import { useModelStore } from './model-store';
import { addSessions, cancelTurn, closeSession, sendMessage, stopAll } from './session-actions';
import { composerDrafts } from './composer-drafts';
import { useSessionsStore } from './sessions-store';

vi.mock('../engine-client', async () => {
  const { fakeEngineClient: make } = await import('../testing/fake-engine-client');
  const fake = make();
  return { getEngineClient: () => fake, restartEngineClient: () => fake };
});

const engine = getEngineClient() as FakeEngineClient;
const initialSessions = useSessionsStore.getState();
const initialModel = useModelStore.getState();
const view = (paneId: string) => useSessionsStore.getState().views.get(paneId)!;
/** The engine calls that start turns, as [method, first argument after the session]. */
const turnCalls = () => engine.calls.filter((c) => c.method === 'createSession' || c.method === 'send').map((c) => (c.method === 'send' ? `send ${String(c.args[0])} ${String(c.args[1])}` : 'createSession'));
/** Lets pending promise callbacks run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('messages sent while a model loads', () => {
  beforeEach(() => {
    useSessionsStore.setState(initialSessions, true);
    useModelStore.setState(initialModel, true);
    engine.clear();
  });

  it('a model swap: each pane holds its message, shown as waiting, and all go out oldest first when the load ends; a running turn is cut as before', async () => {
    useModelStore.getState().set({ model: modelInfo('old') });
    const [running, a, b] = addSessions(3);
    useSessionsStore.getState().bindEngine(running, 's-old');
    useSessionsStore.getState().updateView(running, (v) => beginTurn(v, 'long one', 0));
    const load = loadModel({ kind: 'embedded' }, { confirm: () => true });
    expect(useModelStore.getState().loading).not.toBeNull();

    const sentB = sendMessage(b, 'to b first');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const sentA = sendMessage(a, 'to a second');
    expect(view(a).waitingForModel?.text).toBe('to a second');
    expect(view(b).waitingForModel?.text).toBe('to b first');
    expect(view(a).lines).toEqual([]);
    // One message per pane: the composer is closed until it goes out.
    expect(await sendMessage(a, 'another')).toBe(false);
    expect(view(a).waitingForModel?.text).toBe('to a second');
    expect(turnCalls()).toEqual([]);

    engine.finishLoad(modelInfo('new'));
    expect(await load).toBe(true);
    expect(await sentB).toBe(true);
    expect(await sentA).toBe(true);
    expect(turnCalls()).toEqual(['createSession', 'send s1 to b first', 'createSession', 'send s2 to a second']);
    for (const [paneId, text] of [[a, 'to a second'], [b, 'to b first']]) {
      expect(view(paneId).waitingForModel).toBeUndefined();
      expect(view(paneId).state).toBe('waiting');
      expect(view(paneId).lines).toEqual([{ role: 'user', text }, { role: 'assistant', text: '' }]);
    }
    expect(view(running)).toMatchObject({ state: 'error', error: 'The model changed during this turn; send it again.' });
  });

  it('a failed load hands every held message back to its composer with the load\'s reason, and sends nothing', async () => {
    useModelStore.getState().set({ model: modelInfo('old') });
    const [a, b] = addSessions(2);
    const load = loadModel({ kind: 'url', url: 'https://example.com/m.gguf' });
    const sentA = sendMessage(a, 'hello');
    const sentB = sendMessage(b, 'there');
    engine.failLoad(new Error('HTTP 404 for m.gguf'));
    expect(await load).toBe(false);
    expect(await sentA).toBe(false);
    expect(await sentB).toBe(false);
    for (const [paneId, text] of [[a, 'hello'], [b, 'there']]) {
      expect(view(paneId).waitingForModel).toBeUndefined();
      expect(view(paneId).returnedDraft).toBe(text);
      expect(view(paneId).lines).toEqual([]);
      expect(view(paneId).error).toContain('HTTP 404 for m.gguf');
      expect(view(paneId).error).toContain('old is still serving');
    }
    expect(useModelStore.getState().error).toBe(view(a).error);
    expect(turnCalls()).toEqual([]);
  });

  it('the first load, and the engine starting before it: held too, rather than "no model is loaded yet"', async () => {
    const [a, b] = addSessions(2);
    useModelStore.getState().set({ booting: true });
    const sentA = sendMessage(a, 'before the load began');
    expect(view(a).waitingForModel?.text).toBe('before the load began');
    const load = loadModel({ kind: 'embedded' });
    expect(useModelStore.getState().booting).toBe(false);
    const sentB = sendMessage(b, 'during it');
    expect(view(b).waitingForModel?.text).toBe('during it');
    engine.finishLoad(modelInfo('first'));
    await load;
    expect([await sentA, await sentB]).toEqual([true, true]);
    expect(turnCalls()).toEqual(['createSession', 'send s1 before the load began', 'createSession', 'send s2 during it']);
  });

  it('with no model and none coming, a message is refused back to the composer as before', async () => {
    const [a] = addSessions(1);
    expect(await sendMessage(a, 'hi')).toBe(false);
    expect(view(a)).toMatchObject({ state: 'error', error: 'No model is loaded yet.', returnedDraft: 'hi' });
    expect(view(a).waitingForModel).toBeUndefined();
  });

  it('cancel, close and stop all drop a held message: nothing is sent when the load ends and the pane is as before', async () => {
    useModelStore.getState().set({ model: modelInfo('old') });
    const [a, b, c, d] = addSessions(4);
    const before = view(a);
    const load = loadModel({ kind: 'embedded' });
    const sent = [sendMessage(a, 'cancel me'), sendMessage(b, 'close me'), sendMessage(c, 'stop me'), sendMessage(d, 'keep me')];
    await cancelTurn(a);
    await closeSession(b);
    expect(view(a)).toEqual(before);
    expect(useSessionsStore.getState().views.has(b)).toBe(false);
    await settle();
    expect(await Promise.race([sent[0], settle().then(() => 'pending')])).toBe(false);
    expect(await Promise.race([sent[1], settle().then(() => 'pending')])).toBe(false);
    // d still waits: stop all drops it with c.
    await stopAll();
    expect(view(c).waitingForModel).toBeUndefined();
    expect(view(d).waitingForModel).toBeUndefined();
    engine.finishLoad(modelInfo('new'));
    await load;
    expect(await Promise.all(sent)).toEqual([false, false, false, false]);
    expect(turnCalls()).toEqual([]);
    expect(engine.calls.filter((call) => call.method === 'cancel')).toEqual([]);
  });
});

describe("a pane's settings reach its engine session", () => {
  beforeEach(() => {
    useSessionsStore.setState(initialSessions, true);
    useModelStore.setState(initialModel, true);
    engine.clear();
    useModelStore.getState().set({ model: modelInfo('m') });
  });

  it('the response format as the sampling constraint, with logprobs, penalties and logit bias', async () => {
    const [a] = addSessions(1, { ...DEFAULT_SETTINGS, responseFormat: 'json_schema', jsonSchema: '{ "type": "object" }', logprobs: 4, presencePenalty: 0.5, logitBias: '3: -100' });
    expect(await sendMessage(a, 'hi')).toBe(true);
    const created = engine.calls.find((c) => c.method === 'createSession')!;
    expect(created.args[0]).toMatchObject({ sampling: { constraint: { kind: 'json_schema', schema: '{"type":"object"}' }, logprobs: 4, presencePenalty: 0.5, logitBias: { 3: -100 } } });
  });

  it('a schema that is not JSON refuses the message back to the composer with the reason, and creates no session', async () => {
    const [a] = addSessions(1, { ...DEFAULT_SETTINGS, responseFormat: 'json_schema', jsonSchema: '{"type": "object",' });
    expect(await sendMessage(a, 'hi')).toBe(false);
    expect(view(a)).toMatchObject({ state: 'error', returnedDraft: 'hi', lines: [] });
    expect(view(a).error).toMatch(/^Response format: The JSON schema is not valid JSON/);
    expect(turnCalls()).toEqual([]);
  });
});

describe("a pane's composer draft", () => {
  it('is forgotten when the pane closes, and only that pane\'s', async () => {
    useSessionsStore.setState(initialSessions, true);
    const entries = new Map<string, string>();
    vi.stubGlobal('localStorage', { getItem: (k: string) => entries.get(k) ?? null, setItem: (k: string, v: string) => void entries.set(k, v), removeItem: (k: string) => void entries.delete(k) });
    try {
      const [a, b] = addSessions(2);
      composerDrafts.write(a, 'unsent in a');
      composerDrafts.write(b, 'unsent in b');
      await closeSession(a);
      expect(composerDrafts.read(a)).toBe('');
      expect(composerDrafts.read(b)).toBe('unsent in b');
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
