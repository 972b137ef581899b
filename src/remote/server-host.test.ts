// ServerHost against a real llama-server on the embedded model's GGUF (built by scripts/llama-server.mjs):
// connect, concurrent sessions in the server's slots, NIAH recall, abort freeing a slot, typed errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepEvent } from '../protocol/events';
import { decodeThroughput } from '../protocol/metrics';
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS, niahLeaks, niahPassed } from '../protocol/niah';
import { ServerError } from './server-errors';
import { ServerHost } from './server-host';
import { freePort, startLlamaServer, type RunningLlamaServer } from './testing/llama-server-fixtures';

const NUM_SLOTS = 8;
let server: RunningLlamaServer;

beforeAll(async () => {
  server = await startLlamaServer({ numSlots: NUM_SLOTS, slotContext: 2048 });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function connected(sampleEveryMs = 100): Promise<{ host: ServerHost; events: StepEvent[] }> {
  const host = new ServerHost({ sampleEveryMs });
  const events: StepEvent[] = [];
  await host.subscribe((event) => events.push(event));
  await host.loadModel({ kind: 'server', baseUrl: `${server.baseUrl}/v1/` });
  return { host, events };
}

describe('ServerHost on llama-server', () => {
  it('connects: engine kind, slots, context and both monitoring endpoints', async () => {
    const { host } = await connected();
    const info = (await host.currentModel())!;
    expect(info.server).toMatchObject({ kind: 'llama.cpp', baseUrl: server.baseUrl, numSlots: NUM_SLOTS, endpoints: { slots: true, metrics: true } });
    expect(info.contextTokens).toBe(2048);
    expect(info.server!.notes).toEqual([]);
  });

  it('serves 8 NIAH sessions at once: each recalls its own code, the samples show the busy slots', async () => {
    const { host, events } = await connected();
    const cases = makeNiahSuite(7, NUM_SLOTS, 600, 1400);
    const ids = await Promise.all(cases.map(() => host.createSession({ maxNewTokens: NIAH_MAX_NEW_TOKENS })));
    await Promise.all(ids.map((id, i) => host.send(id, cases[i]!.prompt)));
    const results = await Promise.all(ids.map((id) => host.waitForTurn(id)));
    const codes = cases.map((c) => c.code);
    results.forEach((result, i) => {
      expect(result.finishReason === 'eos' || result.finishReason === 'length').toBe(true);
      expect(niahPassed(result.text, cases[i]!.code), `session ${i}: ${result.text}`).toBe(true);
      expect(niahLeaks(result.text, cases[i]!.code, codes)).toEqual([]);
    });
    const maxBusy = Math.max(...events.map((e) => e.server?.numBusy ?? 0));
    expect(maxBusy).toBeGreaterThan(1);
    expect(events.every((e) => e.server?.sampled === true && e.server.kind === 'llama.cpp')).toBe(true);
    // the rows carry every delivered token of every session, and the texts add up to the results
    ids.forEach((id, i) => {
      const rows = events.flatMap((e) => e.rows.filter((r) => r.sessionId === id));
      expect(rows.map((r) => r.newText).join('')).toBe(results[i]!.text);
      expect(rows[0]!.kind).toBe('prefill');
    });
    for (const id of ids) {
      const stats = (await host.getSession(id)).stats;
      const numDelivered = events.flatMap((e) => e.rows.filter((r) => r.sessionId === id)).reduce((n, r) => n + r.newTokenIds.length, 0);
      expect(stats.tokensIn).toBeGreaterThan(500);
      expect(stats.tokensOut).toBe(numDelivered);
      expect(stats.tokensOut).toBeGreaterThan(0);
    }
  }, 180_000);

  it('a cancelled turn frees its slot: /slots shows it idle', async () => {
    const { host } = await connected();
    const id = await host.createSession({ maxNewTokens: 100_000, ignoreEos: true });
    await host.send(id, 'Repeat after me: abc abc abc');
    const deadline = Date.now() + 30_000;
    while ((await host.getSession(id)).stats.tokensOut < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const busy = (await (await fetch(`${server.baseUrl}/slots`)).json()) as Array<{ is_processing: boolean }>;
    expect(busy.some((s) => s.is_processing)).toBe(true);
    await host.cancel(id);
    const result = await host.waitForTurn(id);
    expect(result.finishReason).toBe('cancelled');
    let idle = false;
    for (let i = 0; i < 50 && !idle; i++) {
      const slots = (await (await fetch(`${server.baseUrl}/slots`)).json()) as Array<{ is_processing: boolean }>;
      idle = slots.every((s) => !s.is_processing);
      if (!idle) await new Promise((r) => setTimeout(r, 100));
    }
    expect(idle).toBe(true);
  }, 60_000);

  it('serialized mode sends one turn at a time', async () => {
    const { host, events } = await connected(20);
    await host.setMode('serialized');
    const ids = await Promise.all([0, 1, 2].map(() => host.createSession({ maxNewTokens: 300, ignoreEos: true })));
    await Promise.all(ids.map((id) => host.send(id, 'Say something.')));
    await Promise.all(ids.map((id) => host.waitForTurn(id)));
    // a turn's first row is its prefill, and the next turn starts only once the last one ended
    expect(Math.max(...events.map((e) => e.rows.filter((r) => r.kind === 'decode').length))).toBe(1);
    expect(Math.max(...events.map((e) => e.server?.numBusy ?? 0))).toBe(1);
  }, 60_000);

  it('after an idle spell the next sample starts afresh instead of spanning the idle time', async () => {
    let clockMs = 0;
    const host = new ServerHost({ sampleEveryMs: 20, now: () => clockMs });
    const events: StepEvent[] = [];
    await host.subscribe((e) => events.push(e));
    await host.loadModel({ kind: 'server', baseUrl: server.baseUrl });
    const id = await host.createSession({ maxNewTokens: 4, ignoreEos: true });
    await host.send(id, 'Hello');
    await host.waitForTurn(id);
    clockMs = 60_000; // a minute idle
    const numBefore = events.length;
    await host.send(id, 'Again');
    await host.waitForTurn(id);
    expect(events[numBefore]!.startedAtMs).toBe(60_000);
    expect(events[numBefore]!.elapsedMs).toBe(0);
  }, 30_000);

  it('decode tok/s over its samples counts every token the streams delivered', async () => {
    const { host, events } = await connected(10);
    const id = await host.createSession({ maxNewTokens: 400, ignoreEos: true });
    await host.send(id, 'Count with me.');
    await host.waitForTurn(id);
    const rows = events.flatMap((e) => e.rows);
    const numDecodeTokens = rows.filter((r) => r.kind === 'decode').reduce((n, r) => n + r.newTokenIds.length, 0);
    expect(numDecodeTokens).toBeGreaterThan(10);
    expect(decodeThroughput(events.filter((e) => e.rows.every((r) => r.kind === 'decode'))).decodeTokens).toBe(numDecodeTokens);
  }, 30_000);

  it('a wrong port is unreachable, with its own message', async () => {
    const host = new ServerHost();
    const port = await freePort();
    const err = await host.loadModel({ kind: 'server', baseUrl: `http://127.0.0.1:${port}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).code).toBe('unreachable');
    expect((err as Error).message).toMatch(/Nothing is listening at http:\/\/127\.0\.0\.1:\d+/);
    expect(await host.currentModel()).toBeNull();
  });

  it('a path that is no OpenAI server says so', async () => {
    const err = await new ServerHost().loadModel({ kind: 'server', baseUrl: `${server.baseUrl}/nothing-here` }).catch((e: unknown) => e);
    expect((err as ServerError).code).toBe('not-found');
  });
});

describe('ServerHost on a llama-server with an API key and no monitoring', () => {
  let locked: RunningLlamaServer;
  beforeAll(async () => {
    locked = await startLlamaServer({ numSlots: 2, slotContext: 1024, apiKey: 'right-key', monitoring: false });
  }, 120_000);
  afterAll(async () => {
    await locked?.stop();
  });

  it('a wrong key is a 401 the person can act on; the right key connects', async () => {
    const err = await new ServerHost().loadModel({ kind: 'server', baseUrl: locked.baseUrl, apiKey: 'wrong-key' }).catch((e: unknown) => e);
    expect((err as ServerError).code).toBe('unauthorized');
    expect((err as Error).message).toMatch(/refused the API key \(401/);
    const host = new ServerHost({ sampleEveryMs: 100 });
    const info = await host.loadModel({ kind: 'server', baseUrl: locked.baseUrl, apiKey: 'right-key' });
    expect(info.server!.endpoints).toEqual({ slots: false, metrics: false });
    expect(info.server!.notes.join(' ')).toMatch(/--slots/);
    expect(info.server!.notes.join(' ')).toMatch(/--metrics/);
    // the view degrades; chat keeps working
    const events: StepEvent[] = [];
    await host.subscribe((e) => events.push(e));
    const id = await host.createSession({ maxNewTokens: 8, ignoreEos: true });
    await host.send(id, 'Hello');
    const result = await host.waitForTurn(id);
    expect(result.finishReason).toBe('length');
    expect(result.text.length).toBeGreaterThan(0);
    expect(events.some((e) => e.server && e.server.numBusy === undefined)).toBe(true);
  }, 60_000);
});

describe('ServerHost when the server goes away mid-turn', () => {
  it('ends the turn with an error that says the connection broke, and keeps the session', async () => {
    const doomed = await startLlamaServer({ numSlots: 1, slotContext: 1024 });
    const host = new ServerHost({ sampleEveryMs: 50 });
    await host.loadModel({ kind: 'server', baseUrl: doomed.baseUrl });
    const id = await host.createSession({ maxNewTokens: 100_000, ignoreEos: true });
    await host.send(id, 'Repeat after me: abc abc abc');
    const deadline = Date.now() + 30_000;
    while ((await host.getSession(id)).stats.tokensOut < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await doomed.stop();
    const result = await host.waitForTurn(id);
    expect(result.finishReason).toBe('error');
    expect(result.error).toMatch(/connection to http:\/\/127\.0\.0\.1:\d+ broke during the completion/);
    expect((await host.getSession(id)).state).toBe('error');
  }, 60_000);
});
