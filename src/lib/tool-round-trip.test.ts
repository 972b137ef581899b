// A tool call round trip through chat.completions on the embedded model (in-process EngineHost,
// CpuRunner): the runner computes every step and then replies with a scripted text, so the prompts the
// engine renders and the calls the library reads are the real ones; the model's own tokens are noise.
// Under tool_choice 'auto' the scripted replies are held to the model's call format like any other.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { EngineHost } from '../host/engine-host';
import { CpuRunner } from '../reference/cpu-runner';
import { CohortEngine } from './engine';
import type { ChatCompletionFunctionTool, ChatCompletionMessageParam } from './types';

const MODEL_DIR = new URL('../../public/models/cohort-tiny/', import.meta.url);
/** The embedded vocabulary: ids 0-255 are the bytes, then its three special tokens. */
const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
const IM_END = 258;

type Plan = Parameters<CpuRunner['execute']>[0];
type Masks = Parameters<CpuRunner['execute']>[1];

/**
 * CpuRunner whose sampled tokens are replaced by a script: each new session's first sampled token
 * takes the next reply of `replies` (its bytes, then <|im_end|>); with none queued, the session
 * keeps the model's own tokens. It records what each session was fed.
 */
class ScriptedRunner extends CpuRunner {
  readonly replies: string[] = [];
  /** Per session: the position of its first fed token and the ids fed before its first sample. */
  readonly fed = new Map<string, { startPos: number; ids: number[]; sampled: number; script: number[] | null }>();

  override async execute(plan: Plan, masks?: Masks) {
    const result = await super.execute(plan, masks);
    plan.rows.forEach((row, i) => {
      let seen = this.fed.get(row.sessionId);
      if (!seen) this.fed.set(row.sessionId, (seen = { startPos: row.startPos, ids: [], sampled: -1, script: null }));
      if (seen.sampled < 0) seen.ids.push(...row.tokenIds);
      if (!row.sample) return;
      if (seen.sampled < 0) {
        const reply = this.replies.shift();
        seen.script = reply === undefined ? null : [...new TextEncoder().encode(reply), IM_END];
        seen.sampled = 0;
      }
      if (seen.script) result.sampledIds[i] = seen.script[Math.min(seen.sampled++, seen.script.length - 1)]!;
    });
    return result;
  }
}

const decode = (ids: readonly number[]) => {
  const bytes: number[] = [];
  let out = '';
  const flush = () => {
    out += new TextDecoder().decode(new Uint8Array(bytes));
    bytes.length = 0;
  };
  for (const id of ids) {
    if (id < 256) {
      bytes.push(id);
      continue;
    }
    flush();
    out += SPECIALS[id - 256];
  }
  flush();
  return out;
};

const WEATHER: ChatCompletionFunctionTool = { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const ASK: ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris?' },
];

let engine: CohortEngine;
let runner: ScriptedRunner;

/** The last session the runner saw (each request opens its own). */
const lastFed = () => [...runner.fed.values()].at(-1)!;

beforeAll(async () => {
  const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];
  const files = names.map((name) => new File([readFileSync(new URL(name, MODEL_DIR))], name));
  const host = new EngineHost({ makeRunner: async (desc) => (runner = new ScriptedRunner(desc, { numBlocks: 257 })), embeddedModelUrl: MODEL_DIR.href });
  engine = new CohortEngine(host);
  await engine.load({ kind: 'files', files });
});

describe('a tool call round trip on the embedded model', () => {
  it('its template has no tools, so the model card says the system prompt lists them', () => {
    expect(engine.models[0]!.toolsRendering).toBe('system-prompt');
  });

  it('calls a tool, gets the result back, answers: prompts rendered with the tools and the turns, the call read from the reply', async () => {
    runner.replies.push('{"name": "get_weather", "arguments": {"city": "Paris"}}');
    const first = await engine.chat.completions.create({ messages: ASK, tools: [WEATHER], speculation: 'off' });
    const fedFirst = lastFed();
    expect(fedFirst.startPos).toBe(0);
    const prompt = decode(fedFirst.ids);
    expect(prompt.startsWith('<|im_start|>system\nBe brief.\n\nYou can call these functions (each given as JSON):\n' + JSON.stringify(WEATHER.function) + '\n')).toBe(true);
    expect(prompt.endsWith('<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    expect(first.usage.prompt_tokens).toBe(fedFirst.ids.length);

    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_\w+$/) as string, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);

    runner.replies.push('It is 21 C in Paris.');
    const messages: ChatCompletionMessageParam[] = [...ASK, choice.message, { role: 'tool', tool_call_id: choice.message.tool_calls![0]!.id, content: '{"temp_c": 21}' }];
    const stream = await engine.chat.completions.create({ messages, tools: [WEATHER], speculation: 'off', stream: true, stream_options: { include_usage: true } });
    let text = '';
    const reasons: string[] = [];
    let cached = -1;
    let promptTokens = 0;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        expect(c.delta.tool_calls).toBeUndefined();
        if (c.finish_reason) reasons.push(c.finish_reason);
      }
      if (chunk.usage) {
        cached = chunk.usage.prompt_tokens_details.cached_tokens;
        promptTokens = chunk.usage.prompt_tokens;
      }
    }
    expect(text).toBe('It is 21 C in Paris.');
    expect(reasons).toEqual(['stop']);
    // the second prompt: the first one, the call as the plain rendering writes it, the result as a user turn
    const second = prompt + `{"name": "get_weather", "arguments": {"city":"Paris"}}<|im_end|>\n<|im_start|>user\nResult of call ${choice.message.tool_calls![0]!.id}:\n{"temp_c": 21}<|im_end|>\n<|im_start|>assistant\n`;
    const fedSecond = lastFed();
    expect(second.endsWith(decode(fedSecond.ids))).toBe(true);
    expect(fedSecond.startPos + fedSecond.ids.length).toBe(promptTokens);
    expect(cached).toBe(fedSecond.startPos);
    expect(cached).toBeGreaterThan(0); // the first turn's prompt came from the prefix cache
  });

  it('streams a Qwen-style call as one tool-call delta, the text before it as content, nothing of the tag as text', async () => {
    runner.replies.push('Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>');
    const stream = await engine.chat.completions.create({ messages: ASK, tools: [WEATHER], speculation: 'off', stream: true });
    let text = '';
    const calls: unknown[] = [];
    const reasons: string[] = [];
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        text += c.delta.content ?? '';
        calls.push(...(c.delta.tool_calls ?? []));
        if (c.finish_reason) reasons.push(c.finish_reason);
      }
    }
    expect(text).toBe('Checking.');
    expect(calls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/) as string, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }]);
    expect(reasons).toEqual(['tool_calls']);
  });

  it("tool_choice 'none': no tools in the prompt, and a reply that looks like a call stays text", async () => {
    runner.replies.push('{"name": "get_weather", "arguments": {"city": "Paris"}}');
    const reply = await engine.chat.completions.create({ messages: ASK, tools: [WEATHER], tool_choice: 'none', speculation: 'off' });
    expect(decode(lastFed().ids)).not.toContain('You can call these functions');
    expect(reply.choices[0]!.message).toEqual({ role: 'assistant', content: '{"name": "get_weather", "arguments": {"city": "Paris"}}', refusal: null });
    expect(reply.choices[0]!.finish_reason).toBe('stop');
  });

  // The model's own tokens (noise, unscripted here) held to the call's schema by the engine's constraint.
  it("tool_choice 'required' and a named function: the model's own replies at temperature 1 are one call to the tool", async () => {
    const TIME: ChatCompletionFunctionTool = { type: 'function', function: { name: 'get_time' } };
    // A random-weight model rarely closes an unbounded string: the city is bounded by a pattern.
    const BOUNDED_WEATHER: ChatCompletionFunctionTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', pattern: '^[A-Za-z]{1,12}$' } }, required: ['city'] } } };
    for (const tool_choice of ['required', { type: 'function', function: { name: 'get_weather' } }] as const) {
      const replies = await Promise.all(
        Array.from({ length: 4 }, (_, seed) => engine.chat.completions.create({ messages: ASK, tools: [BOUNDED_WEATHER, TIME], tool_choice, temperature: 1, seed, max_tokens: 400, speculation: 'off' })),
      );
      for (const reply of replies) {
        const choice = reply.choices[0]!;
        expect(choice.finish_reason).toBe('tool_calls');
        expect(choice.message.tool_calls).toHaveLength(1);
        const { name, arguments: args } = choice.message.tool_calls![0]!.function;
        expect(name).toMatch(tool_choice === 'required' ? /^(get_weather|get_time)$/ : /^get_weather$/);
        const parsed = JSON.parse(args) as Record<string, unknown>;
        if (name === 'get_weather') expect(typeof parsed.city).toBe('string');
      }
    }
  });
});

describe("tool_choice 'auto' and the model's call format", () => {
  it("the embedded model's is the plain rendering's JSON: a reply that opens with '{' must be a call, so one that is not is refused mid-turn", async () => {
    expect(engine.models[0]!.toolCallFormat).toBe('plain-json');
    runner.replies.push('{"answer": 42}');
    await expect(engine.chat.completions.create({ messages: ASK, tools: [WEATHER], speculation: 'off' })).rejects.toThrow(/token 97 was sampled outside the constraint/);
  });

  it("a tool whose parameters XGrammar cannot compile is a 400 naming tools under 'auto' too", async () => {
    const broken: ChatCompletionFunctionTool = { type: 'function', function: { name: 'broken', parameters: { type: 'nope' } } };
    await expect(engine.chat.completions.create({ messages: ASK, tools: [WEATHER, broken], speculation: 'off' })).rejects.toMatchObject({ status: 400, param: 'tools', message: expect.stringMatching(/^tools\b(?!.*response_format).*nope/) as string });
  });

  it('a template that writes tools in a form Cohort does not know: toolCallFormat null, and the same reply passes unconstrained as text', async () => {
    // the embedded files with a ChatML template that lists the tools its own way
    const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'generation_config.json'];
    const files = names.map((name) => new File([readFileSync(new URL(name, MODEL_DIR))], name));
    const config = JSON.parse(readFileSync(new URL('tokenizer_config.json', MODEL_DIR), 'utf8')) as Record<string, unknown>;
    config.chat_template = "{%- if tools %}{{- '<|im_start|>system\nTools: ' + (tools | tojson) + '<|im_end|>\n' }}{%- endif %}" + (config.chat_template as string);
    files.push(new File([JSON.stringify(config)], 'tokenizer_config.json'));
    let other!: ScriptedRunner;
    const otherEngine = new CohortEngine(new EngineHost({ makeRunner: async (desc) => (other = new ScriptedRunner(desc, { numBlocks: 257 })), embeddedModelUrl: MODEL_DIR.href }));
    await otherEngine.load({ kind: 'files', files });
    expect(otherEngine.models[0]).toMatchObject({ toolsRendering: 'template', toolCallFormat: null });
    other.replies.push('{"answer": 42}');
    const reply = await otherEngine.chat.completions.create({ messages: ASK, tools: [WEATHER], speculation: 'off' });
    expect(reply.choices[0]!.message.content).toBe('{"answer": 42}');
    expect(reply.choices[0]!.finish_reason).toBe('stop');
  });
});
