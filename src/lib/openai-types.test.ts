// Type tests against the OpenAI JS SDK (a devDependency for these only): what the SDK sends is a
// request here, and what the library returns is the SDK's chunk, completion, usage and error shape.
import type { APIError } from 'openai/error';
import type {
  ChatCompletion as SdkCompletion,
  ChatCompletionChunk as SdkChunk,
  ChatCompletionCreateParams as SdkParams,
  ChatCompletionCreateParamsNonStreaming as SdkNonStreaming,
  ChatCompletionCreateParamsStreaming as SdkStreaming,
} from 'openai/resources/chat/completions';
import type { CompletionUsage as SdkUsage } from 'openai/resources/completions';
import { describe, expect, it } from 'vitest';
import type { CohortEngine } from './engine';
import { ContextLengthError, type CohortError } from './errors';
import { planRequest } from './request';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParams, ChatCompletionStream, CompletionUsage } from './types';

/** Compiles only when From is assignable to To (checked by `npm run typecheck`, never run). */
function assignable<To>(from: To): To {
  return from;
}

// Never called: the checks are the compiler's.
export function typeChecks(engine: CohortEngine, sdk: SdkParams, streaming: SdkStreaming, plain: SdkNonStreaming, chunk: ChatCompletionChunk, completion: ChatCompletion, usage: CompletionUsage, error: CohortError): void {
  assignable<ChatCompletionCreateParams>(sdk);
  assignable<Promise<ChatCompletionStream>>(engine.chat.completions.create(streaming));
  assignable<Promise<ChatCompletion>>(engine.chat.completions.create(plain));
  assignable<SdkChunk>(chunk);
  assignable<SdkCompletion>(completion);
  assignable<SdkUsage>(usage);
  assignable<Pick<APIError, 'status' | 'code' | 'param' | 'type' | 'message'>>(error);
  assignable<AsyncIterable<SdkChunk>>(null as unknown as ChatCompletionStream);
}

describe('OpenAI SDK shapes', () => {
  it('plans a request typed and filled in as the SDK sends it', () => {
    const request: SdkStreaming = {
      model: 'cohort-tiny',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Count to three.', name: 'ann' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 32,
      temperature: 0.5,
      top_p: 0.9,
      seed: 42,
      stop: ['\n\n'],
      n: 2,
      user: 'ann',
      metadata: { page: 'demo' },
      store: false,
      tools: [],
    };
    const plan = planRequest(request);
    expect(plan).toMatchObject({ turn: 'Count to three.', stream: true, includeUsage: true });
    expect(plan.sessions).toHaveLength(2);
    expect(plan.sessions[0]).toMatchObject({
      systemPrompt: 'Be brief.',
      history: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
      ],
      maxNewTokens: 32,
      sampling: { temperature: 0.5, topP: 0.9, seed: 42 },
      stopStrings: ['\n\n'],
    });
    expect(plan.sessions[1]!.sampling!.seed).not.toBe(42);
  });

  it('errors carry the SDK error fields', () => {
    const err = new ContextLengthError(1100, 1024);
    expect({ status: err.status, type: err.type, code: err.code, param: err.param }).toEqual({ status: 400, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' });
    expect(err.error.message).toBe(err.message);
  });
});
