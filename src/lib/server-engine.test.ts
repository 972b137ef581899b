// chat.completions through a real llama-server (the embedded model's GGUF, 8 slots): concurrent
// streams each recall their own code, a resent conversation hits the server's cache, abort, errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS, niahPassed } from '../protocol/niah';
import { startLlamaServer, type RunningLlamaServer } from '../remote/testing/llama-server-fixtures';
import type { CohortEngine } from './engine';
import { AbortError, ContextLengthError } from './errors';
import { createEngine } from './index';
import { createServerEngine } from './server-engine';

let server: RunningLlamaServer;
let engine: CohortEngine;

beforeAll(async () => {
  server = await startLlamaServer({ numSlots: 8, slotContext: 2048 });
  // the library's entry, as a page calls it: a backend means no worker and no WebGPU
  engine = await createEngine({ backend: { baseUrl: server.baseUrl, sampleEveryMs: 50 } });
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function streamText(content: string, signal?: AbortSignal, maxTokens = NIAH_MAX_NEW_TOKENS) {
  const stream = await engine.chat.completions.create({ messages: [{ role: 'user', content }], max_tokens: maxTokens, temperature: 0, stream: true, stream_options: { include_usage: true } }, { signal });
  let text = '';
  let usage;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, usage };
}

describe('the library over a llama-server backend', () => {
  it('names the served model', () => {
    expect(engine.models[0]).toMatchObject({ id: 'cohort-tiny', arch: 'llama.cpp', contextTokens: 2048 });
  });

  it('8 concurrent streamed NIAH completions each return their own code, with usage and a cohort > 1', async () => {
    const cases = makeNiahSuite(11, 8, 500, 1200);
    const results = await Promise.all(cases.map((c) => streamText(c.prompt)));
    results.forEach((r, i) => expect(niahPassed(r.text, cases[i]!.code), r.text).toBe(true));
    for (const { usage } of results) {
      expect(usage!.prompt_tokens).toBeGreaterThan(400);
      expect(usage!.completion_tokens).toBeGreaterThan(0);
      expect(usage!.timings.time_to_first_token_ms).toBeGreaterThan(0);
    }
    expect(Math.max(...results.map((r) => r.usage!.timings.mean_cohort_size))).toBeGreaterThan(1);
  }, 120_000);

  it('a resent conversation finds its prompt in the server cache (cached_tokens > 0)', async () => {
    const first = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'Repeat: kiwi kiwi kiwi' }], max_tokens: 8, temperature: 0 });
    const answer = first.choices[0]!.message.content!;
    const second = await engine.chat.completions.create({
      messages: [
        { role: 'user', content: 'Repeat: kiwi kiwi kiwi' },
        { role: 'assistant', content: answer },
        { role: 'user', content: 'Again.' },
      ],
      max_tokens: 8,
      temperature: 0,
    });
    expect(second.usage.prompt_tokens_details!.cached_tokens).toBeGreaterThan(0);
  }, 60_000);

  it('aborting one of 4 streams ends only that one', async () => {
    const controller = new AbortController();
    // the aborted one is cut after its first chunk, long before its 400 tokens could end it
    const aborted = (async () => {
      const stream = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'Repeat: abc abc' }], max_tokens: 400, ignore_eos: true, temperature: 0, stream: true }, { signal: controller.signal });
      for await (const chunk of stream) if (chunk.choices[0]?.delta.content) controller.abort();
    })();
    const others = [0, 1, 3].map((i) => streamText(`Repeat: ${'abc '.repeat(i + 1)}`, undefined, 48));
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    for (const r of await Promise.all(others)) expect(r.text.length).toBeGreaterThan(0);
  }, 60_000);

  it('an unreachable server rejects createServerEngine with a reason', async () => {
    await expect(createServerEngine({ baseUrl: 'http://127.0.0.1:9' })).rejects.toThrow(/Nothing is listening|could not be reached/);
  });
});

describe('the library over a llama-server backend, errors', () => {
  it('a prompt past the server context is a ContextLengthError with the numbers', async () => {
    const err = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'x'.repeat(2400) }], max_tokens: 4 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextLengthError);
    expect((err as Error).message).toMatch(/2048/);
  }, 60_000);
});
