// What a page that asks for logprobs receives: the step events that cross the worker boundary
// (comlink over a Node worker thread, CpuRunner) carry each new token's logprob and alternatives.
import * as Comlink from 'comlink';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StepEvent, TokenLogprob } from '../protocol/events';
import { startHost, type HostFixture } from './testing/host-fixtures';

let host: HostFixture;

beforeAll(async () => {
  host = await startHost(64);
  await host.api.loadModel({ kind: 'embedded' });
}, 120_000);

afterAll(async () => {
  await host?.close();
});

describe('logprobs in the step stream', () => {
  it('a session with logprobs gets one per reply token in its rows, with its top alternatives; one without gets none', async () => {
    const { api } = host;
    const events: StepEvent[] = [];
    await api.subscribe(Comlink.proxy((e: StepEvent) => void events.push(e)));
    const withLogprobs = await api.createSession({ maxNewTokens: 8, ignoreEos: true, sampling: { temperature: 0.8, seed: 5, logprobs: 3 } });
    const without = await api.createSession({ maxNewTokens: 8, ignoreEos: true, sampling: { temperature: 0.8, seed: 5 } });
    await Promise.all([api.send(withLogprobs, 'hello there'), api.send(without, 'hello there')]);
    const [result] = await Promise.all([api.waitForTurn(withLogprobs), api.waitForTurn(without)]);
    // step events come on their own channel and may trail the turn results
    await vi.waitFor(() => expect(events.some((e) => e.finished.some((f) => f.sessionId === withLogprobs))).toBe(true));

    const rows = events.flatMap((e) => e.rows);
    const tokens: TokenLogprob[] = rows.filter((r) => r.sessionId === withLogprobs).flatMap((r) => r.newLogprobs ?? []);
    expect(tokens.map((t) => t.id)).toEqual(result.outputTokenIds);
    for (const t of tokens) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top).toHaveLength(3);
      // most likely first, and the sampled token is never likelier than the most likely one
      expect(t.top[0]!.logprob).toBeGreaterThanOrEqual(t.top[2]!.logprob);
      expect(t.logprob).toBeLessThanOrEqual(t.top[0]!.logprob);
      expect(typeof t.token).toBe('string');
    }
    expect(rows.filter((r) => r.sessionId === without).every((r) => r.newLogprobs === undefined)).toBe(true);
  }, 120_000);
});
