// tool_choice 'auto' as XGrammar compiles it, driven with the published tokenizers' own ids: free
// text passes, a well-formed call to each tool passes and may end the reply, and once a call opens
// a malformed one is refused; which format each published template gets.
import { beforeAll, describe, expect, it } from 'vitest';
import { ConstraintCache, constraintKey, maskAllows, type CompiledConstraint } from '../engine/constraints';
import type { OutputConstraint, ToolDefinition } from '../engine/types';
import { chatTemplateFromTokenizerConfig } from './chat-template';
import { publishedTokenizerFiles, PUBLISHED_TOKENIZERS, type PublishedTokenizer } from './testing/published-tokenizer-fixtures';
import { HfTokenizer } from './tokenizer';
import { toolCallFormatOf } from './tool-prompt';
import type { ToolCallFormatName } from '../protocol/tool-call-format';
import { XGrammarCompiler } from './xgrammar';

const WEATHER: ToolDefinition = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } }, required: ['city', 'unit'] } },
};
const TIME: ToolDefinition = { type: 'function', function: { name: 'get_time' } };
const autoCalls = (parallel: boolean): OutputConstraint => ({ kind: 'tool_calls', tools: JSON.stringify([WEATHER, TIME]), parallel });

interface Vocab {
  tokenizer: HfTokenizer;
  stop: number;
}

function published(family: PublishedTokenizer['family']): Vocab & { compiler: (format: ToolCallFormatName) => Promise<XGrammarCompiler> } {
  const rows = PUBLISHED_TOKENIZERS.find((t) => t.family === family)!.rows;
  const files = publishedTokenizerFiles(family);
  const tokenizer = HfTokenizer.fromFiles({ tokenizerJson: files.tokenizer, tokenizerConfig: files.tokenizerConfig }, rows);
  const vocab = tokenizer.grammarVocabulary(rows);
  return { tokenizer, stop: vocab.stopTokenIds[0]!, compiler: (format) => XGrammarCompiler.create(vocab, rows, format) };
}

/** How far the matcher takes `text`'s ids: all accepted, and whether the reply may end there. */
async function drive(compiled: CompiledConstraint, v: Vocab, text: string): Promise<{ accepted: boolean; canEnd: boolean; refusedAt?: string }> {
  const matcher = await compiled.newMatcher();
  try {
    const ids = v.tokenizer.encode(text);
    for (const [i, id] of ids.entries()) {
      if (!matcher.acceptToken(id)) return { accepted: false, canEnd: false, refusedAt: v.tokenizer.decode(ids.slice(0, i + 1)) };
    }
    return { accepted: true, canEnd: maskAllows(await matcher.nextTokenBitmask(), 0, v.stop) };
  } finally {
    matcher.dispose();
  }
}

describe("tool_choice 'auto' in the hermes format (Qwen3's tokenizer, <tool_call> one token)", () => {
  const qwen = published('qwen3');
  let parallel: CompiledConstraint;
  let one: CompiledConstraint;
  beforeAll(async () => {
    const compiler = await qwen.compiler('hermes');
    [parallel, one] = [await compiler.compile(autoCalls(true)), await compiler.compile(autoCalls(false))];
  }, 120_000);

  it('the trigger is the tokenizer\'s own <tool_call> token', () => {
    expect(qwen.tokenizer.encode('a <tool_call>\n{')).toContain(151657);
  });

  it('admits free text, and a reply that ends in it', async () => {
    for (const text of ['', 'Hello! The weather { is } fine, "quoted" and <tool not a tag.', '日本語のテキスト {"name": "x"}']) {
      expect(await drive(parallel, qwen, text), text).toEqual({ accepted: true, canEnd: true });
    }
  });

  it('admits a well-formed call to each tool, with text before and after, and several under parallel calls', async () => {
    const weather = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}\n</tool_call>';
    const time = '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>';
    for (const text of [weather, time, `Let me check. ${weather}`, `${weather}\n${time}`, `${time} Done.`]) {
      expect(await drive(parallel, qwen, text), text).toEqual({ accepted: true, canEnd: true });
    }
    // one call only (parallel_tool_calls false): the reply ends with it
    expect(await drive(one, qwen, weather)).toEqual({ accepted: true, canEnd: true });
    expect((await drive(one, qwen, `${weather}\n${time}`)).accepted).toBe(false);
    expect((await drive(one, qwen, `${weather} more text`)).accepted).toBe(false);
  });

  it('after the trigger, forbids a malformed call: an unknown tool, arguments off the schema, a missing close', async () => {
    const bad = [
      '<tool_call>\n{"name": "get_wether", "arguments": {}}\n</tool_call>',
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": 5, "unit": "c"}}\n</tool_call>',
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "kelvin"}}\n</tool_call>',
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      '<tool_call>\n{"name": "get_time", "arguments": {"extra": 1}}\n</tool_call>',
      '<tool_call>\n{"name": "get_time", "args": {}}\n</tool_call>',
      '<tool_call>\n{"name": "get_time", "arguments": {}} and then text',
      'Sure <tool_call> plain words',
    ];
    for (const text of bad) expect((await drive(parallel, qwen, text)).accepted, text).toBe(false);
    // an open call cannot end the reply
    expect(await drive(parallel, qwen, '<tool_call>\n{"name": "get_time", "arguments": {}}')).toEqual({ accepted: true, canEnd: false });
  });
});

describe("tool_choice 'auto' in the JSON formats: the reply is calls or text that does not open with '{'", () => {
  const llama = published('llama3_1');
  let plain: CompiledConstraint;
  let llama3: CompiledConstraint;
  beforeAll(async () => {
    plain = await (await llama.compiler('plain-json')).compile(autoCalls(true));
    llama3 = await (await llama.compiler('llama3-json')).compile(autoCalls(false));
  }, 120_000);

  it('admits free text (a "{" inside it too) and a call to each tool in its own arguments key', async () => {
    for (const text of ['The answer is 42.', '  Use {"name": "x"} like this', 'ok']) expect(await drive(plain, llama, text), text).toEqual({ accepted: true, canEnd: true });
    for (const text of ['{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "f"}}', '{"name": "get_time", "arguments": {}}\n{"name": "get_time", "arguments": {}}']) {
      expect(await drive(plain, llama, text), text).toEqual({ accepted: true, canEnd: true });
    }
    expect(await drive(llama3, llama, '{"name": "get_weather", "parameters": {"city": "Oslo", "unit": "f"}}')).toEqual({ accepted: true, canEnd: true });
  });

  it('a reply that opens with "{" is a call: a malformed one is forbidden, and text may not follow it', async () => {
    for (const text of ['{"name": "nope", "arguments": {}}', '{"name": "get_weather", "arguments": {"city": "Oslo"}}', '{"answer": 42}', ' {"name": "get_time", "arguments": {}}', '{"name": "get_time", "arguments": {}} then text']) {
      expect((await drive(plain, llama, text)).accepted, text).toBe(false);
    }
    expect((await drive(llama3, llama, '{"name": "get_time", "arguments": {}}')).accepted, "Llama 3.1's key is parameters").toBe(false);
    expect((await drive(llama3, llama, '{"name": "get_time", "parameters": {}}\n{"name": "get_time", "parameters": {}}')).accepted, 'one call under parallel false').toBe(false);
  });
});

describe('which format a model gets, and the compile cache', () => {
  it("Qwen3's template teaches <tool_call>; Llama 3.1's published one has no tools (the plain rendering); Llama 3.1's tool template its JSON; others none", () => {
    const qwen = chatTemplateFromTokenizerConfig(publishedTokenizerFiles('qwen3').tokenizerConfig);
    expect(toolCallFormatOf(qwen.toolsRendering, qwen.source)).toBe('hermes');
    const llama = chatTemplateFromTokenizerConfig(publishedTokenizerFiles('llama3_1').tokenizerConfig);
    expect(toolCallFormatOf(llama.toolsRendering, llama.source)).toBe('plain-json');
    const llamaTools = '{{- "Respond in the format {\\"name\\": function name, \\"parameters\\": dictionary of argument name and its value}." }}{{ tools | tojson }}';
    expect(toolCallFormatOf('template', llamaTools)).toBe('llama3-json');
    expect(toolCallFormatOf('template', `{{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}`)).toBe('llama3-json');
    expect(toolCallFormatOf('template', '{{ tools | tojson }}[TOOL_CALLS]')).toBeNull();
  });

  it('compiles once per kind and text: the same tools hit the cache, parallel or other tools do not; no format, a clear refusal', async () => {
    const qwen = published('qwen3');
    const cache = new ConstraintCache(await qwen.compiler('hermes'));
    const first = cache.compile(autoCalls(true));
    expect(cache.compile({ ...autoCalls(true) })).toBe(first);
    expect(constraintKey(autoCalls(false))).not.toBe(constraintKey(autoCalls(true)));
    expect(constraintKey({ kind: 'tool_calls', tools: JSON.stringify([TIME]), parallel: true })).not.toBe(constraintKey(autoCalls(true)));
    await first;
    await expect((await qwen.compiler(null as unknown as ToolCallFormatName)).compile(autoCalls(true))).rejects.toThrow(/no tool-call format/);
  }, 120_000);
});
