// chat.completions end to end over the engine worker in a Node thread (CpuRunner, synthetic model),
// through the library's own comlink wiring: streams, concurrency == solo, n, abort, cache, errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHost, type HostFixture } from '../host/testing/host-fixtures';
import type { StepEvent } from '../protocol/events';
import { CohortEngine } from './engine';
import { AbortError, ContextLengthError, InvalidRequestError, ModelChangedError, ModelLoadError, ModelNotLoadedError } from './errors';
import { linkOverEndpoint } from './remote';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsBase } from './types';

let host: HostFixture;
let engine: CohortEngine;
/** 64 usable blocks of 16: a 1,024-token context, small enough to fill. */
const NUM_BLOCKS = 65;

beforeAll(async () => {
  host = await startHost(NUM_BLOCKS);
  engine = new CohortEngine(linkOverEndpoint(host.endpoint).link);
  await engine.load({ kind: 'embedded' });
  // which requests ride together must not hang on this machine's speed: the step-time budget (the
  // host's default reads the real clock) is off here, except where a test sets its own
  await engine.setStepBudget(null);
});

afterAll(async () => {
  await host?.close();
});

type Params = Omit<ChatCompletionCreateParamsBase, 'stream'>;

const ask = (content: string, extra: Partial<Params> = {}): Params => ({ messages: [{ role: 'user', content }], max_tokens: 12, temperature: 0, ...extra });

async function complete(params: Params): Promise<ChatCompletion> {
  return engine.chat.completions.create({ ...params, stream: false });
}

/** Reads a stream into its chunks and each choice's text. */
async function streamed(params: Params, signal?: AbortSignal): Promise<{ chunks: ChatCompletionChunk[]; texts: string[] }> {
  const stream = await engine.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal });
  const chunks: ChatCompletionChunk[] = [];
  const texts: string[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    for (const choice of chunk.choices) texts[choice.index] = (texts[choice.index] ?? '') + (choice.delta.content ?? '');
  }
  return { chunks, texts };
}

const PROMPTS = ['hello there', 'what is a cohort?', 'x', 'a much longer prompt that takes several more tokens than the others', 'tell me a story', '1 2 3 4', 'zebra', 'why is the sky blue'];

describe('chat.completions over EngineApi', () => {
  it('answers a non-streamed request as the session API does, with usage and timings', async () => {
    const completion = await complete(ask('hello there'));
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe(engine.models[0]!.id);
    const [choice] = completion.choices;
    expect(choice!.message.role).toBe('assistant');
    const id = await host.api.createSession({ maxNewTokens: 12, sampling: { temperature: 0 } });
    await host.api.send(id, 'hello there');
    const solo = await host.api.waitForTurn(id);
    expect(choice!.message.content).toBe(solo.text);
    expect(choice!.finish_reason).toBe(solo.finishReason === 'length' ? 'length' : 'stop');
    const usage = completion.usage;
    expect(usage.prompt_tokens).toBe(solo.promptTokenIds.length);
    expect(usage.completion_tokens).toBe(solo.outputTokenIds.length);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    expect(usage.timings.prefill_tokens_per_second).toBeGreaterThan(0);
    expect(usage.timings.time_to_first_token_ms).toBeGreaterThan(0);
    expect(usage.timings.mean_cohort_size).toBeGreaterThanOrEqual(1);
  });

  it('streams chunks that add up to the non-streamed answer, usage last', async () => {
    const whole = await complete(ask('what is a cohort?'));
    const { chunks, texts } = await streamed(ask('what is a cohort?'));
    expect(texts[0]).toBe(whole.choices[0]!.message.content);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.filter((c) => c.choices.some((ch) => ch.finish_reason !== null))).toHaveLength(1);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBe(whole.usage.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('8 concurrent greedy streams return exactly their solo runs, riding in shared steps', async () => {
    const solo: string[] = [];
    for (const prompt of PROMPTS) solo.push((await complete(ask(prompt, { max_tokens: 16 }))).choices[0]!.message.content!);
    const together = await Promise.all(PROMPTS.map((prompt) => streamed(ask(prompt, { max_tokens: 16 }))));
    expect(together.map((r) => r.texts[0])).toEqual(solo);
    const cohorts = together.map((r) => r.chunks.at(-1)!.usage!.timings.mean_cohort_size);
    expect(Math.max(...cohorts)).toBeGreaterThan(1);
  });

  it('n: 4 with a seed gives 4 different, reproducible siblings, streamed or not', async () => {
    const params = ask('tell me a story', { n: 4, seed: 1234, temperature: 1, max_tokens: 16, ignore_eos: true });
    const first = await complete(params);
    const again = await complete(params);
    const texts = first.choices.map((c) => c.message.content);
    expect(first.choices.map((c) => c.index)).toEqual([0, 1, 2, 3]);
    expect(again.choices.map((c) => c.message.content)).toEqual(texts);
    expect(new Set(texts).size).toBe(4);
    const stream = await streamed(params);
    expect(stream.texts).toEqual(texts);
    // choice 0 keeps the request's seed, so it is what n: 1 gives
    expect((await complete({ ...params, n: 1 })).choices[0]!.message.content).toBe(texts[0]);
    expect(first.usage.completion_tokens).toBe(4 * 16);
  });

  it('n: 4 siblings share the prompt\'s KV blocks', async () => {
    const events: StepEvent[] = [];
    const off = engine.onStep((e) => events.push(e));
    const result = await complete(ask(`a prompt of several blocks: ${'the siblings share it '.repeat(4)}`, { n: 4, seed: 5, temperature: 1, max_tokens: 8, ignore_eos: true }));
    off();
    expect(result.choices).toHaveLength(4);
    expect(Math.max(...events.map((e) => e.kvBlocksShared))).toBeGreaterThan(0);
  });

  it('gives each request its own temperature in one cohort: the tokens it gets alone', async () => {
    const temps = [0, 0.7, 1, 1.5];
    const params = temps.map((temperature, i) => ask(PROMPTS[i]!, { temperature, seed: 7 + i, max_tokens: 16, ignore_eos: true }));
    const alone: string[] = [];
    for (const p of params) alone.push((await complete(p)).choices[0]!.message.content!);
    const together = await Promise.all(params.map((p) => streamed(p)));
    expect(together.map((r) => r.texts[0])).toEqual(alone);
    expect(Math.max(...together.map((r) => r.chunks.at(-1)!.usage!.timings.mean_cohort_size))).toBeGreaterThan(1);
  });

  it('aborting one of several streams ends only that one and frees its blocks at once', async () => {
    const events: StepEvent[] = [];
    const off = engine.onStep((e) => events.push(e));
    const params = PROMPTS.slice(0, 4).map((p) => ask(p, { max_tokens: 48, ignore_eos: true }));
    const alone = await complete(params[0]!);
    const controller = new AbortController();
    let abortedAt = -1;
    const others = Promise.all([0, 1, 3].map((i) => streamed(params[i]!)));
    const victim = (async () => {
      const stream = await engine.chat.completions.create({ ...params[2]!, stream: true }, { signal: controller.signal });
      let n = 0;
      for await (const _chunk of stream) {
        // abort mid-decode, once all four ride together
        if (++n >= 3 && abortedAt < 0 && events.some((e) => e.numRunning === 4 && e.rows.length === 4)) {
          abortedAt = events.length;
          controller.abort();
        }
      }
    })();
    await expect(victim).rejects.toBeInstanceOf(AbortError);
    const rest = await others;
    off();
    expect(rest[0]!.texts[0]).toBe(alone.choices[0]!.message.content);
    expect(rest.every((r) => r.chunks.at(-1)!.usage!.completion_tokens === 48)).toBe(true);
    // the last step the victim rode in and the first without it: the others decode on, and the
    // victim's blocks are back (at least its last block, which is never shared while written), net
    // of the blocks the others took on meanwhile (one per 16 positions they crossed)
    const lastWith = events.findLastIndex((e) => e.numRunning === 4 && e.rows.length === 4);
    const after = events.slice(lastWith + 1).find((e) => e.rows.length === 3 && e.numRunning === 3);
    expect(lastWith).toBeGreaterThanOrEqual(0);
    expect(after).toBeDefined();
    const blocksAt = (position: number): number => Math.floor(position / 16) + 1;
    const positions = new Map(events[lastWith]!.rows.map((r) => [r.sessionId, r.position + r.numTokens - 1]));
    const victimId = [...positions.keys()].find((id) => !after!.rows.some((r) => r.sessionId === id));
    expect(victimId).toBeDefined();
    const grown = after!.rows.reduce((n, r) => n + blocksAt(r.position + r.numTokens - 1) - blocksAt(positions.get(r.sessionId)!), 0);
    expect(after!.kvBlocksUsed).toBeLessThanOrEqual(events[lastWith]!.kvBlocksUsed + grown - 1);
  });

  it('leaving a stream early (break, or stream.controller.abort()) cancels its request', async () => {
    for (const leave of ['break', 'controller'] as const) {
      const events: StepEvent[] = [];
      const off = engine.onStep((e) => events.push(e));
      const stream = await engine.chat.completions.create({ ...ask('zebra', { max_tokens: 400, ignore_eos: true }), stream: true });
      let n = 0;
      const reading = (async () => {
        for await (const _chunk of stream) {
          if (++n < 3) continue;
          if (leave === 'break') break;
          stream.controller.abort();
        }
      })();
      if (leave === 'break') await reading;
      else await expect(reading).rejects.toBeInstanceOf(AbortError);
      await expect.poll(() => events.some((e) => e.finished.some((f) => f.reason === 'cancelled'))).toBe(true);
      off();
      const last = events.at(-1)!;
      expect(last.numRunning).toBe(0);
      expect(last.kvBlocksUsed).toBe(0);
    }
  });

  it('queues requests that do not fit the KV pool together, and serves them all', async () => {
    // 6 x (300 + 40) tokens need about 130 blocks of a pool of 64: some wait or are preempted
    const params = Array.from({ length: 6 }, (_, i) => ask(`${i} ${'padding '.repeat(37)}`, { max_tokens: 40, ignore_eos: true }));
    const results = await Promise.all(params.map((p) => complete(p)));
    expect(results.map((r) => r.usage.completion_tokens)).toEqual(params.map(() => 40));
  });

  it('finds the earlier turns of a resent conversation in the prefix cache', async () => {
    const system = { role: 'system' as const, content: 'You are a helpful assistant for a long conversation about the weather.' };
    const user1 = { role: 'user' as const, content: 'Is it going to rain tomorrow in the city?' };
    // ASCII only (bytes 128..255 and the stray <|im_start|> banned), so the answer's text encodes back to its tokens
    const asciiOnly = Object.fromEntries([...Array.from({ length: 128 }, (_, i) => 128 + i), 257].map((id) => [String(id), -100]));
    const first = await complete({ messages: [system, user1], max_tokens: 24, temperature: 0, logit_bias: asciiOnly });
    const answer = first.choices[0]!.message.content!;
    const second = await complete({ messages: [system, user1, { role: 'assistant', content: answer }, { role: 'user', content: 'And the day after?' }], max_tokens: 8, temperature: 0 });
    const cached = second.usage.prompt_tokens_details.cached_tokens;
    // every full block of the first prompt is found, and the answer's too: its text encodes back to
    // the tokens that made it (all but the last, never fed, are in the cache)
    const blockSize = engine.models[0]!.blockSize;
    expect(cached).toBeGreaterThanOrEqual(Math.floor(first.usage.prompt_tokens / blockSize) * blockSize);
    expect(cached).toBeGreaterThan(0);
    expect(answer).not.toContain('\ufffd');
    expect(cached).toBe(Math.floor((first.usage.prompt_tokens + first.usage.completion_tokens - 1) / blockSize) * blockSize);
  });

  it('refuses a prompt past the context with a 400 that names both numbers', async () => {
    const long = ask('y'.repeat(1100));
    const err = await complete(long).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextLengthError);
    const overflow = err as ContextLengthError;
    expect(overflow.status).toBe(400);
    expect(overflow.code).toBe('context_length_exceeded');
    expect(overflow.contextTokens).toBe(1024);
    expect(overflow.promptTokens).toBeGreaterThan(1100);
    expect(overflow.message).toContain('1024');
    await expect(streamed(long)).rejects.toBeInstanceOf(ContextLengthError);
  });

  it('refuses out-of-bounds and unsupported fields with a 400 naming the field', async () => {
    const cases: Array<[Params, string]> = [
      [ask('hi', { temperature: -1 }), 'temperature'],
      [ask('hi', { top_p: 2 }), 'top_p'],
      [ask('hi', { max_tokens: 0 }), 'max_completion_tokens'],
      [ask('hi', { seed: 1.5 }), 'seed'],
      [ask('hi', { n: 0 }), 'n'],
      [ask('hi', { tools: [{ type: 'function', function: { name: 'f' } }, { type: 'function', function: { name: 'no spaces allowed' } }] }), 'tools[1].function.name'],
      [ask('hi', { tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: { type: 'function', function: { name: 'g' } } }), 'tool_choice.function.name'],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
      [{ messages: [{ role: 'function', content: 'x', name: 'f' }] }, 'messages[0].role'],
      [ask('hi', { frequency_penalty: 2.5 }), 'frequency_penalty'],
      [ask('hi', { presence_penalty: Number.NaN }), 'presence_penalty'],
      [ask('hi', { repetition_penalty: 0 }), 'repetition_penalty'],
      [ask('hi', { logit_bias: { '5': 101 } }), 'logit_bias'],
      [ask('hi', { logit_bias: { abc: 1 } }), 'logit_bias'],
      [ask('hi', { logit_bias: { '99999999': 1 } }), 'logit_bias'], // past the vocabulary
      [ask('hi', { logprobs: true, top_logprobs: 21 }), 'top_logprobs'],
      [ask('hi', { response_format: { type: 'xml' } as never }), 'response_format'],
      [ask('hi', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'nope' } } } }), 'response_format'], // XGrammar refuses it
      [ask('hi', { response_format: { type: 'grammar', grammar: 'root ::= undefined_rule' } }), 'response_format'],
    ];
    for (const [params, param] of cases) {
      const err = await complete(params).catch((e: unknown) => e);
      expect(err, param).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).status).toBe(400);
      expect((err as InvalidRequestError).param).toBe(param);
    }
  });

  it('carries tools and a turn of tool results through the worker: the prompt grows by the tool list and the results', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Look a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } } }];
    const plain = await complete(ask('define cohort'));
    const withTools = await complete(ask('define cohort', { tools }));
    expect(withTools.usage.prompt_tokens).toBeGreaterThan(plain.usage.prompt_tokens + JSON.stringify(tools[0]!.function).length / 4);
    const call = { id: 'call_x', type: 'function' as const, function: { name: 'lookup', arguments: '{"word":"cohort"}' } };
    const messages: Params['messages'] = [{ role: 'user', content: 'define cohort' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_x', content: 'a group that travels together' }];
    const answered = await complete({ messages, tools, max_tokens: 4 });
    expect(answered.usage.prompt_tokens).toBeGreaterThan(withTools.usage.prompt_tokens);
    expect(answered.choices[0]!.finish_reason).toMatch(/^(stop|length|tool_calls)$/);
  });

  it("returns logprobs in OpenAI's shape, streamed the same; a penalized request gets its solo tokens in a cohort", async () => {
    const params = ask('tell me a story', { temperature: 0.8, seed: 3, max_tokens: 12, ignore_eos: true, logprobs: true, top_logprobs: 2, frequency_penalty: 1, presence_penalty: 0.5, repetition_penalty: 1.3, logit_bias: { '101': -100 } });
    const whole = await complete(params);
    const lp = whole.choices[0]!.logprobs!.content!;
    expect(lp).toHaveLength(12);
    for (const t of lp) {
      expect(t.logprob).toBeLessThanOrEqual(0);
      expect(t.top_logprobs).toHaveLength(2);
      expect(t.top_logprobs[0]!.logprob).toBeGreaterThanOrEqual(t.top_logprobs[1]!.logprob);
      expect(t.bytes).toEqual(Array.from(new TextEncoder().encode(t.token)));
      expect(t.token).not.toBe('e'); // id 101 banned
    }
    expect(lp).toHaveLength(whole.usage.completion_tokens);
    const { chunks, texts } = await streamed(params);
    expect(texts[0]).toBe(whole.choices[0]!.message.content);
    expect(chunks.flatMap((c) => c.choices.flatMap((ch) => ch.logprobs?.content ?? []))).toEqual(lp);
    // beside requests without penalties, each gets what it gets alone
    const plain = ask('why is the sky blue', { temperature: 0.8, seed: 4, max_tokens: 12, ignore_eos: true });
    const alone = (await complete(plain)).choices[0]!.message.content;
    const [a, b] = await Promise.all([streamed(params), streamed(plain)]);
    expect([a.texts[0], b.texts[0]]).toEqual([whole.choices[0]!.message.content, alone]);
    expect((await complete(plain)).choices[0]!.logprobs).toBeNull();
    const unpenalized = await complete({ ...params, frequency_penalty: 0, presence_penalty: 0, repetition_penalty: 1, logit_bias: null });
    expect(unpenalized.choices[0]!.message.content).not.toBe(whole.choices[0]!.message.content);
  });

  it('response_format json_schema: n: 4 sampled replies at temperature 1 each parse as the schema, streamed the same; a cut one says length', async () => {
    const schema = { type: 'object', properties: { answer: { enum: ['yes', 'no'] }, score: { type: 'integer', minimum: 0, maximum: 99 }, tags: { type: 'array', items: { enum: ['a', 'b'] }, maxItems: 3 } }, required: ['answer', 'score', 'tags'] };
    const params = ask('Is the sky blue? Reply in JSON.', { temperature: 1, seed: 5, n: 4, max_tokens: 400, response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } } });
    const whole = await complete(params);
    expect(whole.choices).toHaveLength(4);
    for (const choice of whole.choices) {
      expect(choice.finish_reason, choice.message.content ?? '').toBe('stop');
      const reply = JSON.parse(choice.message.content!) as { answer: string; score: number; tags: string[] };
      expect(['yes', 'no']).toContain(reply.answer);
      expect(Number.isInteger(reply.score) && reply.score >= 0 && reply.score <= 99).toBe(true);
      expect(Object.keys(reply).sort()).toEqual(['answer', 'score', 'tags']);
    }
    const { texts } = await streamed(params);
    expect(texts).toEqual(whole.choices.map((c) => c.message.content));
    const json = await complete(ask('JSON please', { temperature: 1, seed: 6, max_tokens: 400, response_format: { type: 'json_object' } }));
    if (json.choices[0]!.finish_reason === 'stop') expect(typeof JSON.parse(json.choices[0]!.message.content!)).toBe('object');
    const cut = await complete({ ...params, n: 1, max_tokens: 3 });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(whole.choices[0]!.message.content!.startsWith(cut.choices[0]!.message.content!)).toBe(true);
  });

  it('streams every step to whoever asks', async () => {
    const seen: StepEvent[] = [];
    const reading = (async () => {
      for await (const step of engine.steps()) if (seen.push(step) >= 2) break;
    })();
    await complete(ask('zebra', { max_tokens: 4 }));
    await reading;
    expect(seen.length).toBe(2);
  });

  it('drafts from a prediction (Predicted Outputs): the same reply, with accepted and rejected prediction tokens', async () => {
    const params = ask('tell me a story', { max_tokens: 24, ignore_eos: true });
    const plain = await complete(params);
    const reply = plain.choices[0]!.message.content!;
    expect(plain.usage.completion_tokens_details).toEqual({ accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 });
    expect(plain.usage.timings.tokens_per_row_step).toBeGreaterThan(0);

    const steps: StepEvent[] = [];
    const off = engine.onStep((e) => steps.push(e));
    // 'auto' drafts only where a fed token costs less than a decode row's share of the step, and
    // every draft stays within the step-time budget: on CpuRunner a fed token costs about a decode
    // step, so the test asks for drafts and lifts the budget
    await engine.setStepBudget(null);
    const right = await complete({ ...params, speculation: { max_draft_tokens: 6 }, prediction: { type: 'content', content: reply } });
    off();
    expect(right.choices[0]!.message.content).toBe(reply); // a prediction never changes the output
    const details = right.usage.completion_tokens_details;
    // the reply's own text re-encoded: every reply token is in it (token boundaries may differ at most at its ends)
    expect(details.accepted_prediction_tokens).toBeGreaterThan(right.usage.completion_tokens / 2);
    const { timings } = right.usage;
    const drafted = steps.reduce((n, e) => n + e.rows.reduce((m, r) => m + (r.numDrafted ?? 0), 0), 0);
    expect(timings.drafted_tokens).toBe(drafted);
    expect(timings.drafted_tokens).toBeGreaterThan(0);
    expect(timings.draft_acceptance_rate).toBe(timings.accepted_draft_tokens / timings.drafted_tokens);
    expect(timings.accepted_draft_tokens).toBeGreaterThan(0);
    expect(timings.tokens_per_row_step).toBeGreaterThan(1);

    // a prediction with words the reply lacks: those are rejected; streamed, the last chunk says the same
    const wrong = `${reply} and then something else entirely`;
    const whole = await complete({ ...params, prediction: { type: 'content', content: [{ type: 'text', text: wrong }] } });
    const { chunks, texts } = await streamed({ ...params, prediction: { type: 'content', content: wrong } });
    expect(texts[0]).toBe(reply);
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completion_tokens_details).toEqual(whole.usage.completion_tokens_details);
    expect(usage.completion_tokens_details.accepted_prediction_tokens).toBe(details.accepted_prediction_tokens);
    expect(usage.completion_tokens_details.rejected_prediction_tokens).toBeGreaterThan(details.rejected_prediction_tokens);
    await engine.setStepBudget(null);
  });

  it('sets the step-time budget: steps carry it while on and not once off; a bad one is a 400 naming the field', async () => {
    const budgets = async (): Promise<Array<StepEvent['stepBudget']>> => {
      const steps: StepEvent[] = [];
      const off = engine.onStep((e) => steps.push(e));
      // a prompt of several calibrating chunks (32, 16, 8 tokens), so the cost model is fitted and the step shows its target
      await complete(ask(PROMPTS[3]!.repeat(3), { max_tokens: 8, ignore_eos: true }));
      off();
      return steps.map((e) => e.stepBudget);
    };
    await engine.setStepBudget({ maxStepMs: 40 });
    const on = await budgets();
    expect(on.length).toBeGreaterThan(0);
    for (const budget of on) expect(budget).toBeDefined();
    const calibrated = on.filter((b) => b!.calibrated);
    expect(calibrated.length).toBeGreaterThan(0);
    for (const budget of calibrated) expect(budget!.targetMs).toBe(40);
    await engine.setStepBudget(null);
    expect((await budgets()).every((b) => b === undefined)).toBe(true);
    for (const bad of [{ multiple: 0 }, { maxStepMs: -1 }, 'fast']) {
      const err = await engine.setStepBudget(bad as never).catch((e: unknown) => e);
      expect(err, JSON.stringify(bad)).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).param).toMatch(/^stepBudget/);
    }
    await engine.setStepBudget(null);
  });

  it('refuses a malformed prediction with a 400 naming the field', async () => {
    const bad = async (prediction: unknown) => {
      const err = await complete({ ...ask('hi'), prediction: prediction as never }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRequestError);
      return (err as InvalidRequestError).param;
    };
    expect(await bad('the text')).toBe('prediction');
    expect(await bad({ type: 'text', content: 'x' })).toBe('prediction.type');
    expect(await bad({ type: 'content', content: 5 })).toBe('prediction.content');
    expect(await bad({ type: 'content' })).toBe('prediction.content');
    expect(await bad({ type: 'content', content: [{ type: 'image_url' }] })).toBe('prediction.content[0]');
    const err = await complete({ ...ask('hi'), speculation: { max_draft_tokens: 99 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'speculation.max_draft_tokens', message: expect.stringMatching(/^speculation.max_draft_tokens must be an integer from 0 to 32/) });
    expect(await complete({ ...ask('hi'), speculation: 'sometimes' as 'off' }).catch((e: unknown) => (e as InvalidRequestError).param)).toBe('speculation');
  });

  it('refuses a malformed source with a 400 naming its field, and types a failed load by its cause', async () => {
    const kind = await engine.load({ kind: 'no-such-kind' } as never).catch((e: unknown) => e);
    expect(kind).toBeInstanceOf(InvalidRequestError);
    expect(kind).toMatchObject({ status: 400, param: 'model.kind', message: expect.stringContaining("'embedded', 'huggingface', 'url', 'files', 'server'") });
    await expect(engine.load({} as never)).rejects.toMatchObject({ name: 'InvalidRequestError', param: 'model.kind' });
    await expect(engine.load({ kind: 'huggingface', repoId: 'not a repo' })).rejects.toMatchObject({ name: 'InvalidRequestError', param: 'model.repoId' });
    // refused by the worker, past the library's own check: the same 400
    await expect(engine.load({ kind: 'url', url: 'http://example.com/m.gguf' })).rejects.toMatchObject({ name: 'InvalidRequestError', param: 'model.url', message: expect.stringMatching(/only https/) });
    const missing = await engine.load({ kind: 'url', url: `${host.origin}/missing/` }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ModelLoadError);
    expect(missing).toMatchObject({ status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model.url', message: expect.stringContaining('config.json') });
    expect((missing as ModelLoadError).error).toMatchObject({ code: 'model_not_found', param: 'model.url' });
    expect((await complete(ask('hello there'))).choices[0]!.message.content?.length).toBeGreaterThan(0); // the old model still serves
  });

  it('refuses a bad kvCacheType or kvCacheBytes with a 400 naming the option, in the library or past it in the worker', async () => {
    // the library's own check: the wrong shape
    await expect(engine.load({ kind: 'embedded' }, { kvCacheType: 'q4_0' as never })).rejects.toMatchObject({ name: 'InvalidRequestError', status: 400, param: 'kvCacheType', message: expect.stringMatching(/not one of f32, f16, q8_0/) });
    await expect(engine.load({ kind: 'embedded' }, { kvCacheBytes: -1 })).rejects.toMatchObject({ name: 'InvalidRequestError', param: 'kvCacheBytes' });
    // the worker's, against the model: a pool of fewer than 2 blocks
    const small = await engine.load({ kind: 'embedded' }, { kvCacheType: 'q8_0', kvCacheBytes: 1000 }).catch((e: unknown) => e);
    expect(small).toBeInstanceOf(InvalidRequestError);
    expect(small).toMatchObject({ status: 400, param: 'kvCacheBytes', message: expect.stringMatching(/^kvCacheBytes: 1000 bytes buy 0 q8_0 KV blocks .*at least 2 are needed/) });
    expect((await complete(ask('hello there'))).choices[0]!.message.content?.length).toBeGreaterThan(0); // the old model still serves
  });

  it('a load in place of the serving model ends a stream in flight with a ModelChangedError; the next request runs', async () => {
    const stream = await engine.chat.completions.create({ ...ask('keep talking', { max_tokens: 900, ignore_eos: true }), stream: true });
    let numChunks = 0;
    const read = (async () => {
      for await (const chunk of stream) numChunks += chunk.choices.length;
    })().then(
      () => null,
      (e: unknown) => e,
    );
    await engine.load({ kind: 'embedded' });
    const err = await read;
    // the load cut it short: far from its 900 tokens (counted, not timed: the machine's speed is no part of it)
    expect(numChunks).toBeLessThan(900);
    expect(err).toBeInstanceOf(ModelChangedError);
    expect(err).toMatchObject({ status: 409, type: 'invalid_request_error', code: 'model_changed', retryable: true, message: expect.stringMatching(/loaded in place of/) });
    expect((await complete(ask('hello there'))).choices[0]!.message.content?.length).toBeGreaterThan(0);
  });

  it('unload ends the requests in flight and refuses new ones with a 404', async () => {
    const inFlight = streamed(ask('a long answer', { max_tokens: 500, ignore_eos: true }));
    // its end may come before unload() returns: the expectation is attached before that
    const ended = expect(inFlight).rejects.toBeInstanceOf(ModelNotLoadedError);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await engine.unload();
    await ended;
    expect(engine.models).toEqual([]);
    const err = await complete(ask('hi')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelNotLoadedError);
    expect((err as ModelNotLoadedError).status).toBe(404);
  });
});
