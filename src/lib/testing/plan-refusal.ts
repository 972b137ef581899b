// Test support: which field planRequest names when it refuses a request (a 400's param).
// Not product code.
import { InvalidRequestError } from '../errors';
import { planRequest } from '../request';
import type { ChatCompletionCreateParams, ChatCompletionMessageParam } from '../types';

/** planRequest of `request` over `messages`; its refusal's param, null for a 400 naming no field; throws if not refused. */
export function refusedParam(request: Partial<ChatCompletionCreateParams>, messages: ChatCompletionMessageParam[]): string | null {
  try {
    planRequest({ messages, ...request } as ChatCompletionCreateParams);
  } catch (err) {
    if (err instanceof InvalidRequestError) return err.param;
    throw err;
  }
  throw new Error('not refused');
}
