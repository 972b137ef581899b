// Tests of JinjaChatTemplate: the default model's template, template variables, the ChatML
// fallback, named templates, GGUF templates, errors, and the sandbox.

import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../engine/types';
import {
  CHATML_TEMPLATE,
  chatTemplateFromGguf,
  chatTemplateFromTokenizerConfig,
  FALLBACK_NOTE,
  JinjaChatTemplate,
} from './chat-template';
import { ModelFormatError } from './errors';
import { byteLevelFiles, byteLevelGguf } from './testing/tokenizer-fixtures';

const CHAT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'Code?' },
];

describe('JinjaChatTemplate', () => {
  it("renders the default model's template", () => {
    const template = chatTemplateFromTokenizerConfig(byteLevelFiles().tokenizerConfig);
    expect(template.isFallback).toBe(false);
    expect(template.render([{ role: 'user', content: 'Hi' }], true)).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(template.render(CHAT, false)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n' +
        '<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nCode?<|im_end|>\n',
    );
  });

  it('renders the same from GGUF metadata', () => {
    const fromGguf = chatTemplateFromGguf(byteLevelGguf());
    const fromConfig = chatTemplateFromTokenizerConfig(byteLevelFiles().tokenizerConfig);
    expect(fromGguf.render(CHAT, true)).toBe(fromConfig.render(CHAT, true));
  });

  it('passes bos_token and eos_token from the config or the GGUF vocabulary', () => {
    const source = "{{ bos_token }}{% for m in messages %}{{ m['content'] + eos_token }}{% endfor %}";
    const config = { chat_template: source, bos_token: { content: '<s>' }, eos_token: '</s>' };
    expect(chatTemplateFromTokenizerConfig(config).render([{ role: 'user', content: 'x' }], false)).toBe('<s>x</s>');
    const gguf = byteLevelGguf({ 'tokenizer.chat_template': source });
    expect(chatTemplateFromGguf(gguf).render([{ role: 'user', content: 'x' }], false)).toBe('<|endoftext|>x<|im_end|>');
  });

  it('falls back to ChatML, with a note, when there is no template', () => {
    for (const template of [chatTemplateFromTokenizerConfig({}), chatTemplateFromGguf({ ...byteLevelGguf(), 'tokenizer.chat_template': undefined })]) {
      expect(template.isFallback).toBe(true);
      expect(template.fallbackNote).toBe(FALLBACK_NOTE);
      expect(template.source).toBe(CHATML_TEMPLATE);
      expect(template.render([{ role: 'user', content: 'Hi' }], true)).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
    }
  });

  it('picks the "default" entry from a list of named templates', () => {
    const config = {
      chat_template: [
        { name: 'tool_use', template: 'TOOLS' },
        { name: 'default', template: "{% for m in messages %}[{{ m['role'] }}]{% endfor %}" },
      ],
    };
    expect(chatTemplateFromTokenizerConfig(config).render(CHAT.slice(0, 2), false)).toBe('[system][user]');
  });

  it('reports parse errors and raise_exception calls', () => {
    expect(() => new JinjaChatTemplate('{% for m in messages %}')).toThrow(ModelFormatError);
    const strict = new JinjaChatTemplate(
      "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{{ m['content'] }}{% endfor %}",
    );
    expect(strict.render([{ role: 'user', content: 'ok' }], false)).toBe('ok');
    expect(() => strict.render(CHAT, false)).toThrow(/System role not supported/);
  });

  it('gives templates no way to reach JavaScript globals or the caller', () => {
    const probe = new JinjaChatTemplate(
      "[{{ process }}][{{ globalThis }}][{{ messages.constructor }}][{{ ''.constructor }}]{% for m in messages %}{% set m.content = 'changed' %}{% endfor %}",
    );
    const messages: ChatMessage[] = [{ role: 'user', content: 'mine' }];
    expect(() => probe.render(messages, false)).toThrow();
    expect(messages[0].content).toBe('mine');
    const readOnly = new JinjaChatTemplate("[{{ process }}][{{ globalThis }}][{{ messages.constructor }}][{{ ''.constructor }}]");
    expect(readOnly.render(messages, false)).toBe('[][][][]');
  });
});

/** The constructs Gemma's chat template uses, in a template of our own: bos_token, a system turn folded into the first user turn, "model" for the assistant, trim, raise_exception. */
const GEMMA_STYLE =
  "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}{%- set prefix = messages[0]['content'] + '\\n\\n' -%}{%- set turns = messages[1:] -%}" +
  "{%- else -%}{%- set prefix = '' -%}{%- set turns = messages -%}{%- endif -%}" +
  "{%- for m in turns -%}{%- if (m['role'] == 'user') != (loop.index0 % 2 == 0) -%}{{ raise_exception('roles must alternate user/assistant') }}{%- endif -%}" +
  "{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else m['role']) + '\\n' + (prefix if loop.first else '') }}" +
  "{%- if m['content'] is string -%}{{ m['content'] | trim }}{%- endif -%}{{ '<end_of_turn>\\n' }}{%- endfor -%}" +
  "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}";

describe('a Gemma-style template', () => {
  it('renders turns as <start_of_turn>user / model with the system text in the first user turn', () => {
    const template = new JinjaChatTemplate(GEMMA_STYLE, { bosToken: '<bos>' });
    expect(template.render(CHAT, true)).toBe(
      '<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n' +
        '<start_of_turn>user\nCode?<end_of_turn>\n<start_of_turn>model\n',
    );
  });

  it("turns the template's raise_exception into a render error that names it", () => {
    const template = new JinjaChatTemplate(GEMMA_STYLE, { bosToken: '<bos>' });
    expect(() => template.render([{ role: 'assistant', content: 'first' }], true)).toThrow(/chat template failed to render: .*roles must alternate/);
  });
});
