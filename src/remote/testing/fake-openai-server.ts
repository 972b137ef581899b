// A fetch that answers as a minimal OpenAI-compatible server (no /props, /slots or /metrics), for
// ServerHost tests without a llama-server. Test scaffolding only; each completion is held by the test.
import type { ChatMessage } from '../server-turn';

/** One /v1/chat/completions request, streamed as the test says. */
export class FakeCompletion {
  readonly messages: ChatMessage[];
  /** The request body as sent. */
  readonly body: Record<string, unknown>;
  aborted = false;
  private stream!: ReadableStreamDefaultController<Uint8Array>;
  private readonly encoder = new TextEncoder();
  readonly response: Response;

  constructor(body: { messages: ChatMessage[] }, signal: AbortSignal | undefined) {
    this.messages = body.messages;
    this.body = body;
    const readable = new ReadableStream<Uint8Array>({ start: (controller) => void (this.stream = controller) });
    this.response = new Response(readable, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    signal?.addEventListener('abort', () => {
      this.aborted = true;
      this.stream.error(new DOMException('The operation was aborted.', 'AbortError'));
    });
  }

  /** Streams one token of text. */
  token(text: string): void {
    this.chunk({ choices: [{ delta: { content: text }, finish_reason: null }] });
  }

  /** Ends the reply as the model would ('stop' is EOS in OpenAI's words). */
  finish(reason: 'stop' | 'length' = 'stop'): void {
    this.chunk({ choices: [{ delta: {}, finish_reason: reason }] });
    this.stream.enqueue(this.encoder.encode('data: [DONE]\n\n'));
    this.stream.close();
  }

  private chunk(data: unknown): void {
    this.stream.enqueue(this.encoder.encode(`data: ${JSON.stringify(data)}\n\n`));
  }
}

export interface FakeOpenAiServer {
  fetchFn: typeof fetch;
  /** Completions in the order they were asked for. */
  completions: FakeCompletion[];
  /** Resolves with the next completion asked for (at once if one is waiting unclaimed). */
  nextCompletion(): Promise<FakeCompletion>;
  /** The next completion is refused with this HTTP status. */
  refuseNext(status: number, message: string): void;
}

export function fakeOpenAiServer(modelId = 'fake-model'): FakeOpenAiServer {
  const completions: FakeCompletion[] = [];
  let numClaimed = 0;
  let notify: (() => void) | null = null;
  let refusal: { status: number; message: string } | null = null;
  const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const path = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).pathname;
    if (path === '/v1/models') return json(200, { data: [{ id: modelId, owned_by: 'fake' }] });
    if (path !== '/v1/chat/completions') return json(404, { error: { message: 'not found' } });
    if (init?.signal?.aborted) throw new DOMException('The operation was aborted.', 'AbortError');
    if (refusal) {
      const { status, message } = refusal;
      refusal = null;
      return json(status, { error: { message } });
    }
    const completion = new FakeCompletion(JSON.parse(String(init?.body)) as { messages: ChatMessage[] }, init?.signal ?? undefined);
    completions.push(completion);
    notify?.();
    return completion.response;
  }) as typeof fetch;
  return {
    fetchFn,
    completions,
    async nextCompletion() {
      while (completions.length <= numClaimed) await new Promise<void>((resolve) => (notify = resolve));
      return completions[numClaimed++]!;
    },
    refuseNext(status, message) {
      refusal = { status, message };
    },
  };
}
