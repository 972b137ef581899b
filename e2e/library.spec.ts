// The library (createEngine + chat.completions) in a real browser on the embedded model: concurrent
// NIAH streams equal their solo runs, n with a seed, per-request abort and temperatures, prefix cache.
import { expect, test, type Page } from '@playwright/test';
import { makeNiahSuite, NIAH_MAX_NEW_TOKENS, niahLeaks, niahPassed } from '../src/protocol/niah';
import type { RequestSpec, RunOutcome } from '../testing/library/main';
import { openLibraryPage, runRequests, soloOutput, tokenSequences } from './library-page';

test.describe.configure({ mode: 'serial' });

let page: Page;

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  expect(await openLibraryPage(page, { shared: false })).toBe('dedicated');
  // Several checks here say which rows ride together. With the step-time budget on, how many
  // prompt tokens a step takes beside decoding rows follows the measured step cost, so on a busy
  // machine the first requests can finish before the last one is in. Off, the token budget alone
  // sizes chunks: every prompt here is in within a few steps, whatever the machine is doing.
  await page.evaluate(() => window.cohortLib.setStepBudget(null));
});

test.afterAll(async () => {
  await page?.close();
});

const ask = (content: string, extra: Partial<RequestSpec['params']> = {}): RequestSpec => ({ params: { messages: [{ role: 'user', content }], max_tokens: 12, temperature: 0, ...extra } });
/**
 * For the tests that say which rows ride together: one token per row-step, so every request's pace
 * is known. With drafts (on by default) a greedy NIAH row can finish before the last one joins.
 */
const plainDecode = { speculation: 'off' as const };
/** A run's rows per step, for the message of a failed check of which rows rode together. */
const rowsPerStep = (run: RunOutcome): string => `rows per step: ${run.steps.map((s) => s.rows.map((r) => `${r.kind[0]}${r.numTokens}`).join(',')).join(' | ')}`;

test('8 concurrent streamed NIAH completions each return their own code, token for token their solo runs', async () => {
  const cases = makeNiahSuite(1717, 8, 300, 700);
  const specs = cases.map((c) => ask(c.prompt, { max_tokens: NIAH_MAX_NEW_TOKENS, ...plainDecode }));
  const solo: RunOutcome[] = [];
  for (const spec of specs) solo.push(await runRequests(page, [spec]));
  const together = await runRequests(page, specs);
  // with speculation (the default) as well: drafts change how many steps a row takes, never its tokens
  const drafting = await runRequests(page, cases.map((c) => ask(c.prompt, { max_tokens: NIAH_MAX_NEW_TOKENS })));
  expect(drafting.outcomes.map((o) => o.texts[0])).toEqual(solo.map((run) => run.outcomes[0]!.texts[0]));
  expect(tokenSequences(drafting.steps)).toEqual(solo.map((run) => soloOutput(run).tokenIds.join(' ')).sort());
  const codes = cases.map((c) => c.code);
  cases.forEach((c, i) => {
    const text = together.outcomes[i]!.texts[0]!;
    expect(together.outcomes[i]!.error).toBeNull();
    expect(niahPassed(text, c.code), `case ${i}: ${text}`).toBe(true);
    expect(niahLeaks(text, c.code, codes)).toEqual([]);
    expect(text).toBe(solo[i]!.outcomes[0]!.texts[0]);
  });
  // token for token: the cohort's 8 sessions sampled exactly the 8 solo runs' tokens
  expect(tokenSequences(together.steps)).toEqual(solo.map((run) => soloOutput(run).tokenIds.join(' ')).sort());
  expect(Math.max(...together.steps.map((s) => s.rows.length)), rowsPerStep(together)).toBe(8);
});

test('n: 4 with a seed gives 4 different siblings, the same streamed or not, run after run', async () => {
  const spec = ask('Note 0000: this paragraph is unrelated padding.', { n: 4, seed: 1234, temperature: 1, max_tokens: 16, ignore_eos: true });
  const streamed = await runRequests(page, [spec]);
  const again = await runRequests(page, [spec]);
  const whole = await runRequests(page, [{ ...spec, stream: false }]);
  const texts = streamed.outcomes[0]!.texts;
  expect(texts).toHaveLength(4);
  expect(new Set(texts).size).toBe(4);
  expect(again.outcomes[0]!.texts).toEqual(texts);
  expect(whole.outcomes[0]!.texts).toEqual(texts);
  expect(streamed.outcomes[0]!.usage!.completion_tokens).toBe(4 * 16);
  // siblings ride together, sharing the prompt's blocks
  expect(Math.max(...streamed.steps.map((s) => s.rows.length)), rowsPerStep(streamed)).toBe(4);
});

test('aborting one of 8 streams ends only that one and frees its blocks at once', async () => {
  // long enough that all 8 decode together before the first finishes: the victim arrives last, and
  // with the step-time budget off (beforeAll) its prompt goes in one step beside the others' decodes
  const maxTokens = 128;
  const cases = makeNiahSuite(99, 8, 150, 250);
  const specs: RequestSpec[] = cases.map((c) => ask(c.prompt, { max_tokens: maxTokens, ignore_eos: true, ...plainDecode }));
  const victim = 7; // the last to arrive: its first tokens come when the other 7 are running
  specs[victim] = { ...specs[victim]!, abort: { afterChunks: 3, whenRows: 8 } };
  const run = await runRequests(page, specs);
  run.outcomes.forEach((outcome, i) => {
    if (i === victim) {
      expect(outcome.error?.name).toBe('AbortError');
      return;
    }
    expect(outcome.error, `request ${i}`).toBeNull();
    expect(outcome.finishReasons).toEqual(['length']);
    expect(outcome.usage!.completion_tokens).toBe(maxTokens);
  });
  const cancelledAt = run.steps.findIndex((s) => s.finished.some((f) => f.reason === 'cancelled'));
  expect(cancelledAt).toBeGreaterThan(0);
  expect(run.steps.flatMap((s) => s.finished).filter((f) => f.reason === 'cancelled')).toHaveLength(1);
  // its blocks are back at the end of the step that cancels it; the next step runs the other 7
  const before = run.steps[cancelledAt - 1]!;
  const after = run.steps[cancelledAt]!;
  expect(before.rows).toHaveLength(8);
  expect(before.numRunning).toBe(8);
  expect(after.numRunning).toBe(7);
  expect(after.kvBlocksUsed).toBeLessThan(before.kvBlocksUsed);
  expect(run.steps[cancelledAt + 1]!.rows).toHaveLength(7);
  expect(run.steps.at(-1)!.kvBlocksUsed).toBe(0);
});

test('per-request temperatures in one cohort give each request the tokens it gets alone', async () => {
  const temperatures = [0, 0.7, 1, 1.5];
  const specs = temperatures.map((temperature, i) => ask(`Note 000${i}: this paragraph is unrelated padding. Question: what is the secret code? Answer:`, { temperature, seed: 7 + i, max_tokens: 16, ignore_eos: true, ...plainDecode }));
  const alone: RunOutcome[] = [];
  for (const spec of specs) alone.push(await runRequests(page, [spec]));
  const together = await runRequests(page, specs);
  specs.forEach((_, i) => {
    const text = together.outcomes[i]!.texts[0]!;
    expect(text, `temperature ${temperatures[i]}`).toBe(alone[i]!.outcomes[0]!.texts[0]);
  });
  expect(tokenSequences(together.steps)).toEqual(alone.map((run) => soloOutput(run).tokenIds.join(' ')).sort());
  expect(Math.max(...together.steps.map((s) => s.rows.length)), rowsPerStep(together)).toBe(4);
});

test('logprobs and penalties: streamed logprobs are the non-streamed ones, the same alone and beside a plain request', async () => {
  const spec = ask('Note 0001: this paragraph is unrelated padding. Question: what is the secret code? Answer:', { temperature: 0.9, seed: 3, max_tokens: 10, ignore_eos: true, logprobs: true, top_logprobs: 3, frequency_penalty: 0.8, presence_penalty: 0.4, repetition_penalty: 1.2, logit_bias: { '77': -100 }, ...plainDecode });
  const whole = await runRequests(page, [{ ...spec, stream: false }]);
  const lp = whole.outcomes[0]!.logprobs[0]!;
  expect(lp).toHaveLength(10);
  for (const t of lp) {
    expect(t.logprob).toBeLessThanOrEqual(0);
    expect(t.top_logprobs).toHaveLength(3);
    expect(t.bytes).toEqual(Array.from(new TextEncoder().encode(t.token)));
  }
  const plain = ask('Note 0002: this paragraph is unrelated padding. Question: what is the secret code? Answer:', { temperature: 0.9, seed: 4, max_tokens: 10, ignore_eos: true, ...plainDecode });
  const together = await runRequests(page, [spec, plain]);
  expect(together.outcomes[0]!.texts[0]).toBe(whole.outcomes[0]!.texts[0]);
  expect(together.outcomes[0]!.logprobs[0]).toEqual(lp);
  expect(together.outcomes[1]!.logprobs.flat()).toEqual([]);
  const bad = await runRequests(page, [{ ...spec, params: { ...spec.params, top_logprobs: 21 } }]);
  expect(bad.outcomes[0]!.error?.message).toMatch(/top_logprobs/);
});

test('tools: a required call comes back as tool_calls, streamed as deltas and whole alike; the tool\'s answer goes into the next turn, which can answer in text', async () => {
  const weather = { type: 'function' as const, function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { enum: ['Paris', 'Oslo'] }, unit: { enum: ['C', 'F'] } }, required: ['city', 'unit'], additionalProperties: false } } };
  const user = { role: 'user' as const, content: 'What is the weather in Paris?' };
  const spec: RequestSpec = { params: { messages: [user], tools: [weather], tool_choice: 'required', temperature: 1, seed: 4, max_tokens: 600 } };
  const [streamed, whole] = [await runRequests(page, [spec]), await runRequests(page, [{ ...spec, stream: false }])];
  for (const run of [streamed, whole]) {
    const outcome = run.outcomes[0]!;
    expect(outcome.error).toBeNull();
    expect(outcome.finishReasons, JSON.stringify(outcome.texts)).toEqual(['tool_calls']);
    expect(outcome.toolCalls[0]).toHaveLength(1);
    const call = outcome.toolCalls[0]![0]!;
    expect(call.name).toBe('get_weather');
    const args = JSON.parse(call.arguments) as { city: string; unit: string };
    expect(['Paris', 'Oslo']).toContain(args.city);
    expect(['C', 'F']).toContain(args.unit);
    expect(call.id).toMatch(/\S/);
  }
  expect(streamed.outcomes[0]!.toolCalls[0]![0]!.arguments).toBe(whole.outcomes[0]!.toolCalls[0]![0]!.arguments);
  // The round trip: the assistant's call and the tool's answer go back; 'none' lets the model answer in text.
  const call = whole.outcomes[0]!.toolCalls[0]![0]!;
  const next = await runRequests(page, [{
    params: {
      messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] }, { role: 'tool', tool_call_id: call.id, content: '{"temperature": 21}' }],
      tools: [weather], tool_choice: 'none', max_tokens: 8, temperature: 0,
    },
    stream: false,
  }]);
  expect(next.outcomes[0]!.error).toBeNull();
  expect(next.outcomes[0]!.finishReasons[0]).toMatch(/^(stop|length)$/);
  expect(next.outcomes[0]!.toolCalls[0]).toEqual([]);
  // A tool message that answers no call is a 400 naming it.
  const bad = await runRequests(page, [{ params: { messages: [user, { role: 'tool', tool_call_id: 'nope', content: 'x' }], tools: [weather] }, stream: false }]);
  expect(bad.outcomes[0]!.error?.message).toMatch(/messages\[1\]/);
});

test('response_format json_schema: n: 3 sampled replies parse as the schema, streamed and not; a schema XGrammar refuses is a 400 naming response_format', async () => {
  const schema = { type: 'object', properties: { code: { enum: ['MAPLE', 'OAK', 'PINE'] }, number: { type: 'integer', minimum: 1000, maximum: 9999 } }, required: ['code', 'number'] };
  const spec = ask('IMPORTANT: the secret code is MAPLE-7890. Question: what is the secret code? Answer:', { temperature: 1, seed: 9, n: 3, max_tokens: 300, response_format: { type: 'json_schema', json_schema: { name: 'secret', schema, strict: true } } });
  const [streamedRun, whole] = [await runRequests(page, [spec]), await runRequests(page, [{ ...spec, stream: false }])];
  for (const run of [streamedRun, whole]) {
    const outcome = run.outcomes[0]!;
    expect(outcome.error).toBeNull();
    expect(outcome.finishReasons).toEqual(['stop', 'stop', 'stop']);
    for (const text of outcome.texts) {
      const reply = JSON.parse(text) as { code: string; number: number };
      expect(['MAPLE', 'OAK', 'PINE']).toContain(reply.code);
      expect(Number.isInteger(reply.number) && reply.number >= 1000 && reply.number <= 9999).toBe(true);
    }
  }
  expect(streamedRun.outcomes[0]!.texts).toEqual(whole.outcomes[0]!.texts);
  const bad = await runRequests(page, [ask('hi', { response_format: { type: 'json_schema', json_schema: { name: 'bad', schema: { type: 'nope' } } } })]);
  expect(bad.outcomes[0]!.error?.message).toMatch(/response_format/);
});

test('the second turn of a resent conversation reports cached_tokens > 0', async () => {
  const [c] = makeNiahSuite(5, 1, 300, 300);
  const user = { role: 'user' as const, content: c!.prompt };
  const first = await runRequests(page, [{ params: { messages: [user], max_tokens: NIAH_MAX_NEW_TOKENS }, stream: false }]);
  const answer = first.outcomes[0]!.texts[0]!;
  expect(answer).toContain(c!.code);
  const second = await runRequests(page, [{ params: { messages: [user, { role: 'assistant', content: answer }, { role: 'user', content: 'Again?' }], max_tokens: 8 } }]);
  const usage = second.outcomes[0]!.usage!;
  expect(usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(0);
  // at least every full block of the first prompt
  expect(usage.prompt_tokens_details.cached_tokens).toBeGreaterThanOrEqual(Math.floor(first.outcomes[0]!.usage!.prompt_tokens / 16) * 16);
});
