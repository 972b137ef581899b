// EngineApi end to end over a Node worker thread (comlink's node adapter) on CpuRunner: model
// loading over HTTP, concurrent sessions, batched == serialized, bad sources rejected cleanly.
import * as Comlink from 'comlink';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoadProgress } from '../protocol/api';
import type { StepEvent } from '../protocol/events';
import { DEFAULT_STEP_BUDGET } from '../engine/step-budget';
import { startHost, type HostFixture } from './testing/host-fixtures';

let host: HostFixture;
let api: HostFixture['api'];
let origin: string;

beforeAll(async () => {
  host = await startHost(129);
  ({ api, origin } = host);
});

afterAll(async () => {
  await host?.close();
});

async function runTurns(prompts: string[], mode: 'batched' | 'serialized', events: StepEvent[]): Promise<{ ids: string[]; outputs: string[] }> {
  await api.setMode(mode);
  const ids: string[] = [];
  for (const prompt of prompts) {
    const id = await api.createSession({ maxNewTokens: 12, sampling: { temperature: 0 } });
    await api.send(id, prompt);
    ids.push(id);
  }
  const results = await Promise.all(ids.map((id) => api.waitForTurn(id)));
  // step events come on their own channel and may trail the turn results
  await vi.waitFor(() => expect(events.some((e) => e.rows.some((r) => ids.includes(r.sessionId)))).toBe(true));
  return { ids, outputs: results.map((r) => r.outputTokenIds.join(',')) };
}

describe('EngineApi over a Node worker thread', () => {
  it('loads a model, serves concurrent sessions in one cohort, and matches serialized serving', async () => {
    const progress: LoadProgress[] = [];
    const info = await api.loadModel({ kind: 'embedded' }, Comlink.proxy((p: LoadProgress) => void progress.push(p)));
    expect(info.arch).toBe('llama');
    expect(info.numLayers).toBe(2);
    // progress arrives as separate messages: the last may land just after the result
    await vi.waitFor(() => expect(progress.some((p) => p.phase === 'ready')).toBe(true));
    const events: StepEvent[] = [];
    await api.subscribe(Comlink.proxy((e: StepEvent) => void events.push(e)));
    // which sessions ride together must not hang on this machine's speed: the budget (real clock) is off
    await api.setStepBudget(null);

    const prompts = ['hello there', 'a much longer prompt that takes several more tokens', 'x'];
    const batched = await runTurns(prompts, 'batched', events);
    expect(Math.max(...events.map((e) => e.rows.length))).toBeGreaterThan(1);
    const serialized = await runTurns(prompts, 'serialized', events);
    expect(serialized.outputs).toEqual(batched.outputs);
    // Step events travel on their own proxy channel, so a late batched event may land after the
    // serialized run starts: judge each step by whose rows it carries, not by arrival order.
    const serializedEvents = events.filter((e) => e.rows.some((r) => serialized.ids.includes(r.sessionId)));
    expect(serializedEvents.length).toBeGreaterThan(0);
    expect(serializedEvents.every((e) => e.rows.length <= 1 && e.mode === 'serialized')).toBe(true);
    await api.setStepBudget({ ...DEFAULT_STEP_BUDGET });
  }, 120_000);

  it('rejects a broken model with a clear error and keeps serving the old one', async () => {
    await expect(api.loadModel({ kind: 'url', url: `${origin}/missing/` })).rejects.toThrow(/config\.json/);
    await expect(api.loadModel({ kind: 'url', url: 'http://example.com/model.gguf' })).rejects.toThrow(/only https/);
    const id = await api.createSession({ maxNewTokens: 4, sampling: { temperature: 0 } });
    await api.send(id, 'still here?');
    const result = await api.waitForTurn(id);
    expect(result.outputTokenIds.length).toBeGreaterThan(0);
  }, 60_000);

  it('checks every turn it is sent: token ids in a plain array against the vocabulary, a turn of messages by the engine', async () => {
    const id = await api.createSession({ maxNewTokens: 2, sampling: { temperature: 0 } });
    await expect(api.send(id, [5, 1e9] as unknown as Int32Array)).rejects.toThrow(/token id 1000000000 is outside the vocabulary/);
    await expect(api.send(id, { messages: [] })).rejects.toThrow(/messages/);
    await expect(api.send(id, { messages: [{ role: 'tool', content: 7 as unknown as string }] })).rejects.toThrow(/messages\[0\]/);
    await api.send(id, { messages: [{ role: 'user', content: 'served as a turn of messages' }] });
    expect((await api.waitForTurn(id)).finishReason).not.toBe('error');
  }, 60_000);

  it('holds steps to a time budget by default, refuses bad numbers naming them, and turns it off', async () => {
    const events: StepEvent[] = [];
    const subscription = await api.subscribe(Comlink.proxy((e: StepEvent) => void events.push(e)));
    const run = async (): Promise<string> => {
      const id = await api.createSession({ maxNewTokens: 3, sampling: { temperature: 0 } });
      await api.send(id, 'a prompt long enough to take a few chunks once the model is calibrated');
      return (await api.waitForTurn(id)).outputTokenIds.join(',');
    };
    const budgeted = await run();
    await vi.waitFor(() => expect(events.length).toBeGreaterThan(0));
    expect(events.every((e) => e.stepBudget !== undefined)).toBe(true);
    await expect(api.setStepBudget({ multiple: 0.5 })).rejects.toThrow(/stepBudget\.multiple must be/);
    await expect(api.setStepBudget({ maxStepMs: -1 })).rejects.toThrow(/stepBudget\.maxStepMs must be/);
    await api.setStepBudget(null);
    const count = events.length;
    expect(await run()).toBe(budgeted);
    await vi.waitFor(() => expect(events.length).toBeGreaterThan(count));
    expect(events.slice(count).every((e) => e.stepBudget === undefined)).toBe(true);
    await api.setStepBudget({ multiple: 2 });
    await api.unsubscribe(subscription);
  }, 60_000);
});

describe('a load that replaces the serving model', () => {
  it('ends every turn in flight at once as model_changed, and never reuses a replaced session id', async () => {
    const events: StepEvent[] = [];
    const subscription = await api.subscribe(Comlink.proxy((e: StepEvent) => void events.push(e)));
    const old = await api.createSession({ maxNewTokens: 1500, ignoreEos: true, sampling: { temperature: 0 } });
    await api.send(old, 'a turn long enough to still be decoding when the next model is ready');
    const turn = api.waitForTurn(old);
    await vi.waitFor(() => expect(events.some((e) => e.rows.some((r) => r.sessionId === old && r.kind === 'decode'))).toBe(true), { timeout: 20_000 });

    await api.loadModel({ kind: 'embedded' }); // the same files: a real reload, as after a failed load
    // the cut turn's end was emitted before the load resolved; step events trail on their own channel
    await vi.waitFor(() => expect(events.some((e) => e.finished.some((f) => f.sessionId === old))).toBe(true), { timeout: 5_000 });
    const end = events.flatMap((e) => e.finished).find((f) => f.sessionId === old)!;
    expect(end).toMatchObject({ reason: 'error', code: 'model_changed', error: expect.stringMatching(/loaded in place of/) });
    expect(await turn).toMatchObject({ sessionId: old, finishReason: 'error', error: end.error });

    const next = await api.createSession({ maxNewTokens: 3 });
    expect(next).not.toBe(old);
    await api.closeSession(old); // gone with its model: closing it again is no error, and spares `next`
    await expect(api.getSession(old)).rejects.toMatchObject({ name: 'ModelChangedError' });
    await api.send(next, 'still served');
    expect((await api.waitForTurn(next)).finishReason).not.toBe('error');
    await api.unsubscribe(subscription);
  }, 60_000);

  it('names what was wrong with a source and why a load failed, by error name across the worker', async () => {
    await expect(api.loadModel({ kind: 'no-such-kind' } as never)).rejects.toMatchObject({ name: 'InvalidModelSourceError', message: expect.stringMatching(/model\.kind must be one of 'embedded'/) });
    await expect(api.loadModel({} as never)).rejects.toMatchObject({ name: 'InvalidModelSourceError' });
    await expect(api.loadModel({ kind: 'huggingface', repoId: 'not a repo' })).rejects.toMatchObject({ name: 'InvalidModelSourceError', message: expect.stringMatching(/model\.repoId/) });
    await expect(api.loadModel({ kind: 'url', url: `${origin}/missing/` })).rejects.toMatchObject({ name: 'ModelNotFoundError' });
    await expect(api.loadModel({ kind: 'url', url: 'http://127.0.0.1:9/model.gguf' })).rejects.toMatchObject({ name: 'InvalidModelSourceError', message: expect.stringMatching(/only https/) });
  }, 60_000);
});
