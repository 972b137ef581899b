// Why a call to a server failed, in words a person can act on: unreachable, CORS refused, Chrome's
// local-network-access prompt denied, a wrong key, not an OpenAI-compatible server. No retries here.
import { answersWithoutCors, browserOnline } from '../protocol/fetch-diagnosis';

export type ServerErrorCode = 'offline' | 'unreachable' | 'cors' | 'local-network' | 'timeout' | 'unauthorized' | 'not-found' | 'context-length' | 'http' | 'bad-response';

export class ServerError extends Error {
  override name = 'ServerError';
  constructor(
    readonly code: ServerErrorCode,
    message: string,
    readonly status?: number,
    /** For 'context-length': the prompt's tokens and the context it did not fit, as the server counted. */
    readonly numPromptTokens?: number,
    readonly numContextTokens?: number,
  ) {
    super(message);
  }
}

type FetchFn = typeof fetch;

/** How long a connect or monitoring call may wait for headers before it counts as unreachable. */
export const CONNECT_TIMEOUT_MS = 10_000;

const PRIVATE_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|[^.]+\.local)$/i;

/** Loopback or private-network host (what Chrome's local network access guards). */
export function isLocalHost(hostname: string): boolean {
  return PRIVATE_HOST.test(hostname);
}

/**
 * The error for a fetch that threw before any response. Browsers give one TypeError for every
 * network failure; a second, `no-cors` request tells "it answered but refused this origin" (CORS)
 * from "nothing answered" (down, wrong port, DNS, or a denied local-network prompt).
 */
export async function explainNetworkFailure(url: string, err: unknown, fetchFn: FetchFn, pageOrigin?: string): Promise<ServerError> {
  const target = new URL(url);
  const where = target.origin;
  if (isTimeout(err)) return new ServerError('timeout', `${where} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s: is the server running and the address right?`);
  if (browserOnline() === false) return new ServerError('offline', `This browser is offline, so ${where} cannot be reached.`);
  const cause = (err as { cause?: { code?: string } })?.cause?.code;
  if (cause === 'ENOTFOUND' || cause === 'EAI_AGAIN') return new ServerError('unreachable', `No host named ${target.hostname} was found (DNS): check the address.`);
  if (cause === 'ECONNREFUSED') return new ServerError('unreachable', `Nothing is listening at ${where} (connection refused): is the server running on that port?`);
  if (isBrowserScope()) {
    if (await answersWithoutCors(url, fetchFn)) {
      return new ServerError(
        'cors',
        `${where} answered but refused this page's origin${pageOrigin ? ` (${pageOrigin})` : ''} (CORS). Allow it on the server: llama-server sends CORS headers by default unless a proxy strips them; vLLM needs --allowed-origins.`,
      );
    }
    const pageHost = pageOrigin ? new URL(pageOrigin).hostname : '';
    if (isLocalHost(target.hostname) && !isLocalHost(pageHost)) {
      return new ServerError(
        'local-network',
        `${where} is on your local network and this page is not: Chrome asks before a public page may reach it. If the prompt was denied, allow "Local network access" for this site (site settings) and connect again.`,
      );
    }
  }
  return new ServerError('unreachable', `${where} could not be reached (${(err as Error)?.message ?? String(err)}): is the server running and the address right?`);
}

/** A page or worker, where CORS applies and a no-cors probe means something (Node has no CORS). */
function isBrowserScope(): boolean {
  return typeof document !== 'undefined' || (typeof self !== 'undefined' && 'importScripts' in self);
}

function isTimeout(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'TimeoutError';
}

/** The error for a response that is not ok; the body (JSON error or text) says the server's reason. */
export async function explainHttpFailure(response: Response, what: string): Promise<ServerError> {
  const { reason, body } = await serverReason(response);
  const status = response.status;
  // llama.cpp's exceed_context_size_error carries both counts; vLLM says it in the message only
  const numPromptTokens = numberOr(body?.n_prompt_tokens);
  if (status === 400 && (body?.type === 'exceed_context_size_error' || numPromptTokens !== undefined)) {
    return new ServerError('context-length', `${what} was refused: ${reason}`, status, numPromptTokens, numberOr(body?.n_ctx));
  }
  if (status === 401 || status === 403) {
    return new ServerError('unauthorized', `The server refused the API key (${status}${reason ? `: ${reason}` : ''}): enter the key it was started with (llama-server --api-key, vLLM --api-key).`, status);
  }
  if (status === 404) return new ServerError('not-found', `${what} answered 404: this address does not serve it (is it an OpenAI-compatible server, and is the base URL right?)`, status);
  return new ServerError('http', `${what} failed with ${status}${reason ? `: ${reason}` : ''}`, status);
}

type ErrorBody = { message?: string; type?: string; n_prompt_tokens?: unknown; n_ctx?: unknown };

/** The message of an OpenAI-style `{error: {message}}` body (and that object), or the start of a text body. */
async function serverReason(response: Response): Promise<{ reason: string; body?: ErrorBody }> {
  const text = await response.text().catch(() => '');
  try {
    const json = JSON.parse(text) as { error?: ErrorBody | string; message?: string };
    const body = typeof json.error === 'object' ? json.error : undefined;
    const message = typeof json.error === 'string' ? json.error : (body?.message ?? json.message);
    if (message) return { reason: message, body };
  } catch {
    // not JSON: fall through to the text
  }
  return { reason: text.trim().slice(0, 200) };
}

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
