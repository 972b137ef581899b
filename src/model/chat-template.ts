// Chat messages -> prompt text with the model's Jinja chat template (@huggingface/jinja, an
// interpreter with no access to JS globals). Not tokenization: see tokenizer-chat.ts.

import { Template } from '@huggingface/jinja';
import type { ChatMessage, ChatTemplate, ToolCall, ToolDefinition } from '../engine/types';
import { ModelFormatError } from './errors';
import { plainToolMessages, type ToolsRendering } from './tool-prompt';
import { tokenContent, type JsonObject } from './tokenizer';

/**
 * ChatML, used when a model ships no template. It only suits models that know
 * <|im_start|>/<|im_end|>; for others those strings stay plain text and replies may be poor.
 */
export const CHATML_TEMPLATE =
  "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}" +
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";

export const FALLBACK_NOTE =
  'The model has no chat template; prompts use ChatML (<|im_start|>role ... <|im_end|>), ' +
  'which may not match how the model was trained.';

export interface ChatTemplateOptions {
  bosToken?: string | null;
  eosToken?: string | null;
  /** Further variables some templates read (pad_token, unk_token, ...). */
  extraVariables?: Record<string, unknown>;
  /** Set when `source` is the ChatML fallback rather than the model's own template. */
  fallbackNote?: string | null;
}

export class JinjaChatTemplate implements ChatTemplate {
  readonly source: string;
  /** Why this template is a stand-in, or null when it is the model's own. */
  readonly fallbackNote: string | null;
  private readonly template: Template;
  private readonly variables: Record<string, unknown>;
  private rendering: ToolsRendering | undefined;

  constructor(source: string, options: ChatTemplateOptions = {}) {
    this.source = source;
    this.fallbackNote = options.fallbackNote ?? null;
    try {
      this.template = new Template(source);
    } catch (err) {
      throw new ModelFormatError('chat template', `does not parse (${(err as Error).message})`);
    }
    this.variables = {
      ...options.extraVariables,
      bos_token: options.bosToken ?? '',
      eos_token: options.eosToken ?? '',
    };
  }

  get isFallback(): boolean {
    return this.fallbackNote !== null;
  }

  /**
   * 'template' when the template writes the `tools` it is given (Qwen3's, Llama 3.1's own), else
   * 'system-prompt' (plainToolMessages). Found by rendering a probe tool once: a template that
   * mentions `tools` but never prints them is one the model would not see them through.
   */
  get toolsRendering(): ToolsRendering {
    if (this.rendering === undefined) {
      const probe: ToolDefinition = { type: 'function', function: { name: 'cohort_probe_function', description: 'probe', parameters: { type: 'object', properties: {} } } };
      let written = false;
      try {
        written = this.renderJinja([{ role: 'user', content: 'probe' }], true, [probe]).includes(probe.function.name);
      } catch {
        written = false; // a template that fails with tools cannot carry them
      }
      this.rendering = written ? 'template' : 'system-prompt';
    }
    return this.rendering;
  }

  render(messages: ChatMessage[], addGenerationPrompt: boolean, tools?: readonly ToolDefinition[]): string {
    const hasToolTurns = messages.some((m) => m.role === 'tool' || (m.toolCalls?.length ?? 0) > 0);
    if ((tools?.length || hasToolTurns) && this.toolsRendering === 'system-prompt') {
      return this.renderJinja(plainToolMessages(messages, tools), addGenerationPrompt, undefined);
    }
    return this.renderJinja(messages, addGenerationPrompt, tools);
  }

  private renderJinja(messages: ChatMessage[], addGenerationPrompt: boolean, tools: readonly ToolDefinition[] | undefined): string {
    try {
      return this.template.render({
        ...this.variables,
        // Copies: a template can never reach the caller's objects.
        messages: messages.map(templateMessage),
        ...(tools && tools.length > 0 ? { tools: structuredClone(tools) } : {}),
        add_generation_prompt: addGenerationPrompt,
      });
    } catch (err) {
      throw new Error(`chat template failed to render: ${(err as Error).message}`);
    }
  }
}

/**
 * A message as Hugging Face templates read it: `tool_calls` with `function.arguments` as an object
 * (Llama 3.1's writes it with `tojson`; Qwen3's takes an object or a string), `tool_call_id`.
 */
function templateMessage(m: ChatMessage): Record<string, unknown> {
  return {
    role: m.role,
    content: m.content,
    ...(m.toolCalls && m.toolCalls.length > 0 ? { tool_calls: m.toolCalls.map(templateCall) } : {}),
    ...(m.toolCallId !== undefined ? { tool_call_id: m.toolCallId } : {}),
  };
}

function templateCall(call: ToolCall): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    args = call.function.arguments; // not JSON: the text as it is
  }
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: args } };
}

/** The template in tokenizer_config.json (a string, or a list of named ones), else ChatML. */
export function chatTemplateFromTokenizerConfig(config: JsonObject): JinjaChatTemplate {
  const special = (key: string): string | null => tokenContent(config[key]);
  const options: ChatTemplateOptions = {
    bosToken: special('bos_token'),
    eosToken: special('eos_token'),
    extraVariables: { pad_token: special('pad_token') ?? '', unk_token: special('unk_token') ?? '' },
  };
  const source = pickTemplate(config.chat_template);
  if (source === null) return new JinjaChatTemplate(CHATML_TEMPLATE, { ...options, fallbackNote: FALLBACK_NOTE });
  return new JinjaChatTemplate(source, options);
}

/** The template in GGUF metadata (tokenizer.chat_template), else ChatML. */
export function chatTemplateFromGguf(metadata: Record<string, unknown>): JinjaChatTemplate {
  const tokens = metadata['tokenizer.ggml.tokens'];
  const tokenAt = (key: string): string | null => {
    const raw = metadata[key];
    const id = typeof raw === 'bigint' ? Number(raw) : raw;
    if (typeof id !== 'number' || !Array.isArray(tokens)) return null;
    const token: unknown = tokens[id];
    return typeof token === 'string' ? token : null;
  };
  const options: ChatTemplateOptions = {
    bosToken: tokenAt('tokenizer.ggml.bos_token_id'),
    eosToken: tokenAt('tokenizer.ggml.eos_token_id'),
    extraVariables: {
      pad_token: tokenAt('tokenizer.ggml.padding_token_id') ?? '',
      unk_token: tokenAt('tokenizer.ggml.unknown_token_id') ?? '',
    },
  };
  const source = metadata['tokenizer.chat_template'];
  if (typeof source !== 'string' || source.length === 0) {
    return new JinjaChatTemplate(CHATML_TEMPLATE, { ...options, fallbackNote: FALLBACK_NOTE });
  }
  return new JinjaChatTemplate(source, options);
}

function pickTemplate(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0) return value;
  if (!Array.isArray(value)) return null;
  // Newer configs list named templates; "default" is the chat one.
  const named = value.filter(
    (t): t is { name: string; template: string } =>
      t !== null && typeof t === 'object' && typeof t.name === 'string' && typeof t.template === 'string',
  );
  return (named.find((t) => t.name === 'default') ?? named[0])?.template ?? null;
}
