// One streamed /v1/chat/completions request: the body built from a session's settings, the chunks
// read into text deltas with token counts, the end with usage. No sessions, queues or timers here.
import type { FinishReason } from '../protocol/events';
import type { SamplingParams } from '../protocol/api';
import type { ServerKind } from '../protocol/server';
import { authHeaders, type ConnectOptions, type ServerAddress } from './server-connect';
import { explainHttpFailure, explainNetworkFailure, ServerError } from './server-errors';
import { readSseData } from './sse';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface TurnRequest {
  modelId: string;
  messages: ChatMessage[];
  sampling: SamplingParams;
  /** Absent: the server's own default (llama-server and vLLM: until the context ends the turn). */
  maxTokens?: number;
  stopStrings: string[];
  ignoreEos: boolean;
}

export interface TurnProgress {
  /** Text delivered since the last call, and how many tokens it is (the server's count where it gives one). */
  onDelta(text: string, numTokens: number): void;
  /** Prompt tokens and those the server found in its cache, once it says (llama.cpp: every chunk; others: the end). */
  onPrompt(numPromptTokens: number, numCachedTokens: number): void;
}

export interface TurnEnd {
  reason: FinishReason;
  numCompletionTokens?: number;
}

interface Chunk {
  choices?: Array<{ delta?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  timings?: { prompt_n?: number; cache_n?: number; predicted_n?: number };
  error?: { message?: string };
}

/** The request body: OpenAI's fields, plus the llama.cpp ones that make its stream countable. */
export function turnBody(kind: ServerKind, request: TurnRequest): Record<string, unknown> {
  const { sampling } = request;
  return {
    model: request.modelId,
    messages: request.messages,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: request.maxTokens,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    // 0 means "no cut" here and in llama.cpp; vLLM spells it -1
    top_k: sampling.topK === 0 && kind === 'vllm' ? -1 : sampling.topK,
    seed: sampling.seed,
    // penalties and bias as both servers name them (llama.cpp's repeat_penalty is vLLM's repetition_penalty)
    ...(sampling.frequencyPenalty ? { frequency_penalty: sampling.frequencyPenalty } : {}),
    ...(sampling.presencePenalty ? { presence_penalty: sampling.presencePenalty } : {}),
    ...(sampling.repetitionPenalty !== undefined && sampling.repetitionPenalty !== 1 ? { [kind === 'llama.cpp' ? 'repeat_penalty' : 'repetition_penalty']: sampling.repetitionPenalty } : {}),
    ...(sampling.logitBias && Object.keys(sampling.logitBias).length > 0 ? { logit_bias: sampling.logitBias } : {}),
    // JSON mode and JSON schemas as OpenAI's response_format, which both servers read (server-host.ts refuses the rest)
    ...(sampling.constraint?.kind === 'json_object' ? { response_format: { type: 'json_object' } } : {}),
    ...(sampling.constraint?.kind === 'json_schema' ? { response_format: { type: 'json_schema', json_schema: { name: 'response', schema: JSON.parse(sampling.constraint.schema) as unknown, strict: true } } } : {}),
    ...(request.stopStrings.length > 0 ? { stop: request.stopStrings } : {}),
    ...(request.ignoreEos ? { ignore_eos: true } : {}),
    // per-chunk timings carry llama.cpp's exact token counts; cache_prompt reuses a slot's KV
    ...(kind === 'llama.cpp' ? { timings_per_token: true, cache_prompt: true } : {}),
  };
}

/** Streams one turn; rejects with a ServerError (or the signal's AbortError) when it cannot finish. */
export async function streamTurn(address: ServerAddress, kind: ServerKind, request: TurnRequest, progress: TurnProgress, signal: AbortSignal, options: ConnectOptions): Promise<TurnEnd> {
  const fetchFn = options.fetchFn ?? fetch;
  const url = `${address.baseUrl}/v1/chat/completions`;
  let response: Response;
  try {
    response = await fetchFn(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...authHeaders(address) },
      body: JSON.stringify(turnBody(kind, request)),
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw await explainNetworkFailure(url, err, fetchFn, options.pageOrigin);
  }
  if (!response.ok) throw await explainHttpFailure(response, 'POST /v1/chat/completions');
  if (!response.body) throw new ServerError('bad-response', 'the server answered the completion without a body');
  let numCounted = 0;
  let reason: FinishReason | undefined;
  let numCompletionTokens: number | undefined;
  try {
    for await (const data of readSseData(response.body)) {
      let chunk: Chunk;
      try {
        chunk = JSON.parse(data) as Chunk;
      } catch {
        throw new ServerError('bad-response', `the server streamed something that is not JSON: ${data.slice(0, 80)}`);
      }
      if (chunk.error) throw new ServerError('http', `the server ended the completion: ${chunk.error.message ?? 'error'}`);
      const choice = chunk.choices?.[0];
      const text = choice?.delta?.content ?? '';
      const timings = chunk.timings;
      if (timings?.prompt_n !== undefined) progress.onPrompt(timings.prompt_n + (timings.cache_n ?? 0), timings.cache_n ?? 0);
      // llama.cpp counts what it predicted; elsewhere each chunk with text is one token (OpenAI's and vLLM's streams)
      const counted = timings?.predicted_n ?? (text ? numCounted + 1 : numCounted);
      if (text || counted > numCounted) progress.onDelta(text, Math.max(0, counted - numCounted));
      numCounted = Math.max(numCounted, counted);
      if (choice?.finish_reason) reason = finishReasonOf(choice.finish_reason);
      if (chunk.usage) {
        numCompletionTokens = chunk.usage.completion_tokens;
        if (chunk.usage.prompt_tokens !== undefined) progress.onPrompt(chunk.usage.prompt_tokens, chunk.usage.prompt_tokens_details?.cached_tokens ?? 0);
      }
    }
  } catch (err) {
    if (signal.aborted || err instanceof ServerError) throw err;
    // the body broke off (server stopped, restarted or the network dropped): say so, not 'terminated'
    throw new ServerError('unreachable', `the connection to ${address.baseUrl} broke during the completion (${(err as Error).message}): the server may have stopped or restarted`);
  }
  if (numCompletionTokens !== undefined && numCompletionTokens > numCounted) progress.onDelta('', numCompletionTokens - numCounted);
  if (!reason) throw new ServerError('bad-response', 'the server closed the stream before the completion finished');
  return { reason, ...(numCompletionTokens !== undefined ? { numCompletionTokens } : {}) };
}

function finishReasonOf(reason: string): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'stop') return 'eos';
  return 'stop';
}
