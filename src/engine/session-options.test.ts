// Tests of session option validation through the engine: every option's bounds (speculation too), the
// typed error naming the option and the bad value, and no session left behind. Not sampling behaviour.
import { describe, expect, it } from 'vitest';
import type { EngineCore } from './engine-core';
import { InvalidOptionError } from './errors';
import { MAX_NEW_TOKENS, MAX_SEED, MAX_TEMPERATURE, MAX_TOP_K, MIN_TEMPERATURE } from './session-options';
import { MAX_DRAFT_TOKENS } from './speculation';
import type { SessionOptions } from './session-options';
import { runToIdle } from './testing/test-support';
import { makeEngine } from './testing/test-engine';

const FAKE = { numBlocks: 64, blockSize: 4 };

/** The error createSession threw for `options` (fails the test if it did not throw one). */
function refusal(engine: EngineCore, options: SessionOptions): InvalidOptionError {
  const before = engine.sessions.list().length;
  let caught: unknown;
  try {
    engine.createSession(options);
  } catch (err) {
    caught = err;
  }
  expect(caught, JSON.stringify(options)).toBeInstanceOf(InvalidOptionError);
  expect(engine.sessions.list()).toHaveLength(before); // nothing half-made
  return caught as InvalidOptionError;
}

describe('maxNewTokens', () => {
  it.each([
    [0, '0'],
    [-3, '-3'],
    [NaN, 'NaN'],
    [1.5, '1.5'],
    [Infinity, 'Infinity'],
    [-Infinity, '-Infinity'],
    [MAX_NEW_TOKENS + 1, String(MAX_NEW_TOKENS + 1)],
    ['5' as unknown as number, '"5"'],
  ])('refuses %s with an error naming the option and the value', (value, shown) => {
    const err = refusal(makeEngine({ fake: FAKE }), { maxNewTokens: value });
    expect(err.option).toBe('maxNewTokens');
    expect(err.value).toBe(value);
    expect(err.name).toBe('InvalidOptionError');
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toBe(`maxNewTokens must be an integer from 1 to ${MAX_NEW_TOKENS}, got ${shown}`);
  });

  it('takes 1 and the named maximum; 1 generates exactly one token', async () => {
    const engine = makeEngine({ fake: FAKE });
    engine.createSession({ maxNewTokens: MAX_NEW_TOKENS });
    const id = engine.createSession({ maxNewTokens: 1 });
    engine.send(id, 'Hi');
    await runToIdle(engine);
    const turn = await engine.waitForTurn(id);
    expect(turn.finishReason).toBe('length');
    expect(turn.outputTokenIds).toHaveLength(1);
  });

  it('absent, a turn has no cap of its own: it runs until the context ends it (OpenAI max_tokens)', async () => {
    const engine = makeEngine({ fake: { ...FAKE, maxContext: 40 } });
    const id = engine.createSession();
    engine.send(id, 'Hi');
    await runToIdle(engine);
    const turn = await engine.waitForTurn(id);
    expect(turn.finishReason).toBe('length');
    // every position of the context computed, plus the token sampled from the last one
    expect(turn.promptTokenIds.length + turn.outputTokenIds.length).toBe(engine.scheduler.contextLimit + 1);
  });
});

describe('sampling options', () => {
  const refused: Array<[string, SessionOptions, string]> = [
    ['sampling.temperature', { sampling: { temperature: -0.1 } }, '-0.1'],
    ['sampling.temperature', { sampling: { temperature: NaN } }, 'NaN'],
    ['sampling.temperature', { sampling: { temperature: Infinity } }, 'Infinity'],
    ['sampling.temperature', { sampling: { temperature: MAX_TEMPERATURE + 1 } }, String(MAX_TEMPERATURE + 1)],
    ['sampling.temperature', { sampling: { temperature: 1e-9 } }, '1e-9'],
    ['sampling.topK', { sampling: { topK: -1 } }, '-1'],
    ['sampling.topK', { sampling: { topK: 2.5 } }, '2.5'],
    ['sampling.topK', { sampling: { topK: NaN } }, 'NaN'],
    ['sampling.topK', { sampling: { topK: MAX_TOP_K + 1 } }, String(MAX_TOP_K + 1)],
    ['sampling.topP', { sampling: { topP: 0 } }, '0'],
    ['sampling.topP', { sampling: { topP: -0.5 } }, '-0.5'],
    ['sampling.topP', { sampling: { topP: 1.01 } }, '1.01'],
    ['sampling.topP', { sampling: { topP: NaN } }, 'NaN'],
    ['sampling.seed', { sampling: { seed: -1 } }, '-1'],
    ['sampling.seed', { sampling: { seed: 0.5 } }, '0.5'],
    ['sampling.seed', { sampling: { seed: MAX_SEED + 1 } }, String(MAX_SEED + 1)],
    ['seed', { seed: NaN }, 'NaN'],
    ['seed', { seed: -7 }, '-7'],
    ['sampling', { sampling: null as unknown as SessionOptions['sampling'] }, 'null'],
    ['sampling.frequencyPenalty', { sampling: { frequencyPenalty: 2.01 } }, '2.01'],
    ['sampling.presencePenalty', { sampling: { presencePenalty: NaN } }, 'NaN'],
    ['sampling.repetitionPenalty', { sampling: { repetitionPenalty: 0 } }, '0'],
    ['sampling.logitBias', { sampling: { logitBias: { 3: 100.5 } } }, '100.5'],
    ['sampling.logitBias', { sampling: { logitBias: { '-1': 1 } } }, '"-1"'],
    ['sampling.logprobs', { sampling: { logprobs: 21 } }, '21'],
    ['sampling.logprobs', { sampling: { logprobs: 1.5 } }, '1.5'],
  ];
  it.each(refused)('refuses %s in %j', (option, options, shown) => {
    const err = refusal(makeEngine({ fake: FAKE }), options);
    expect(err.option).toBe(option);
    expect(err.message).toMatch(new RegExp(`^${option.replace('.', '\\.')} must be .*, got ${shown.replace('.', '\\.')}$`));
  });

  it('takes every bound itself', () => {
    const engine = makeEngine({ fake: FAKE });
    const ok: SessionOptions[] = [
      { sampling: { temperature: 0, topK: 0, topP: 1, seed: 0 } },
      { sampling: { temperature: MIN_TEMPERATURE, topK: MAX_TOP_K, topP: 1e-9, seed: MAX_SEED } },
      { sampling: { temperature: MAX_TEMPERATURE, topK: 1 }, seed: MAX_SEED },
      { sampling: { frequencyPenalty: -2, presencePenalty: 2, repetitionPenalty: 100, logitBias: { 0: -100, 7: 100 }, logprobs: 20 } },
      { sampling: { frequencyPenalty: 2, presencePenalty: -2, repetitionPenalty: 1e-3, logprobs: 0 } },
    ];
    for (const options of ok) expect(() => engine.createSession(options)).not.toThrow();
  });
});

describe('other options', () => {
  it('refuses non-string stop strings and system prompts, a non-boolean ignoreEos, and odd history', () => {
    const engine = makeEngine({ fake: FAKE });
    expect(refusal(engine, { stopStrings: 'END' as unknown as string[] }).option).toBe('stopStrings');
    expect(refusal(engine, { stopStrings: [7 as unknown as string] }).option).toBe('stopStrings');
    expect(refusal(engine, { systemPrompt: 3 as unknown as string }).option).toBe('systemPrompt');
    expect(refusal(engine, { ignoreEos: 'yes' as unknown as boolean }).option).toBe('ignoreEos');
    expect(refusal(engine, { history: 'hi' as unknown as SessionOptions['history'] }).option).toBe('history');
    const odd = refusal(engine, { history: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 5 as unknown as string }] });
    expect(odd.option).toBe('history[1]');
    expect(odd.message).toBe('history[1] must be a user, assistant or tool message with text content (assistant: optional toolCalls; tool: a toolCallId), got {"role":"assistant","content":5}');
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    expect(refusal(engine, { history: [{ role: 'user', content: 'a', toolCalls: [call] }] }).option).toBe('history[0]'); // only an assistant calls
    expect(refusal(engine, { history: [{ role: 'assistant', content: '', toolCalls: [{ ...call, function: { name: 'f' } as never }] }] }).option).toBe('history[0]');
    expect(refusal(engine, { history: [{ role: 'tool', content: 'r', toolCallId: 7 as unknown as string }] }).option).toBe('history[0]');
    expect(refusal(engine, { tools: [{ type: 'function', function: {} }] as never }).option).toBe('tools');
    expect(refusal(engine, { tools: {} as never }).option).toBe('tools');
    expect(() => engine.createSession({ history: [{ role: 'assistant', content: '', toolCalls: [call] }, { role: 'tool', content: 'r', toolCallId: 'c1' }], tools: [{ type: 'function', function: { name: 'f' } }] })).not.toThrow();
  });
});

describe('speculation options', () => {
  it("takes 'auto', 'off' and { maxDraftTokens } up to the bound, and token-id predictions", () => {
    const engine = makeEngine({ fake: FAKE });
    const ok: SessionOptions[] = [
      { speculation: 'auto' },
      { speculation: 'off' },
      { speculation: { maxDraftTokens: 0 } },
      { speculation: { maxDraftTokens: MAX_DRAFT_TOKENS } },
      { predictionTokenIds: [] },
      { predictionTokenIds: [0, 97, 255] },
    ];
    for (const options of ok) expect(() => engine.createSession(options)).not.toThrow();
  });

  it('refuses other settings and predictions that are not token ids, naming the option', () => {
    const engine = makeEngine({ fake: FAKE });
    expect(refusal(engine, { speculation: 'on' as unknown as 'auto' }).option).toBe('speculation');
    expect(refusal(engine, { speculation: { maxDraftTokens: MAX_DRAFT_TOKENS + 1 } }).option).toBe('speculation.maxDraftTokens');
    expect(refusal(engine, { speculation: { maxDraftTokens: 1.5 } }).option).toBe('speculation.maxDraftTokens');
    expect(refusal(engine, { speculation: { maxDraftTokens: 2, extra: 1 } as unknown as { maxDraftTokens: number } }).option).toBe('speculation');
    expect(refusal(engine, { predictionTokenIds: [1, -1] }).option).toBe('predictionTokenIds');
    expect(refusal(engine, { predictionTokenIds: 'abc' as unknown as number[] }).option).toBe('predictionTokenIds');
    expect(() => engine.setSpeculation({ maxDraftTokens: -1 })).toThrow(InvalidOptionError);
  });
});
