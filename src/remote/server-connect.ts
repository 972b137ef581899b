// Connecting to an OpenAI-compatible server: which engine it is, its model, context and slots, and
// which monitoring endpoints answer. Every failure becomes a ServerError a person can act on.
import type { ModelInfo } from '../protocol/api';
import type { ServerInfo, ServerKind } from '../protocol/server';
import { CONNECT_TIMEOUT_MS, explainHttpFailure, explainNetworkFailure, ServerError } from './server-errors';

export interface ServerAddress {
  /** Without a trailing slash or /v1. */
  baseUrl: string;
  apiKey?: string;
}

export interface ConnectOptions {
  fetchFn?: typeof fetch;
  pageOrigin?: string;
}

/** `http://host:port/v1/` and `http://host:port` name the same server. */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ServerError('not-found', `"${raw}" is not a URL: give the server's address, e.g. http://127.0.0.1:8080`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ServerError('not-found', `a server URL starts with http:// or https://, not ${url.protocol}//`);
  return url.href.replace(/\/+$/, '').replace(/\/v1$/, '');
}

export function authHeaders(address: ServerAddress): Record<string, string> {
  return address.apiKey ? { Authorization: `Bearer ${address.apiKey}` } : {};
}

/** GET a JSON endpoint; network and HTTP failures throw ServerError. */
export async function getJson(address: ServerAddress, path: string, options: ConnectOptions, timeoutMs = CONNECT_TIMEOUT_MS): Promise<unknown> {
  const response = await getResponse(address, path, options, timeoutMs);
  try {
    return await response.json();
  } catch {
    throw new ServerError('bad-response', `GET ${path} did not answer JSON: is ${address.baseUrl} an OpenAI-compatible server?`);
  }
}

export async function getResponse(address: ServerAddress, path: string, options: ConnectOptions, timeoutMs = CONNECT_TIMEOUT_MS): Promise<Response> {
  const fetchFn = options.fetchFn ?? fetch;
  const url = `${address.baseUrl}${path}`;
  let response: Response;
  try {
    response = await fetchFn(url, { headers: authHeaders(address), signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw await explainNetworkFailure(url, err, fetchFn, options.pageOrigin);
  }
  if (!response.ok) throw await explainHttpFailure(response, `GET ${path}`);
  return response;
}

interface ModelsList {
  data?: Array<{ id?: string; owned_by?: string; max_model_len?: number; meta?: { n_ctx_train?: number; n_params?: number; size?: number; n_vocab?: number } }>;
}

interface LlamaProps {
  total_slots?: number;
  model_path?: string;
  default_generation_settings?: { n_ctx?: number };
}

export interface Connected {
  info: ModelInfo;
  server: ServerInfo;
  modelId: string;
}

/** Asks the server what it serves; throws ServerError when it is not there, refuses the key, or is no OpenAI server. */
export async function connectServer(address: ServerAddress, requestedModel: string | undefined, options: ConnectOptions): Promise<Connected> {
  const models = (await getJson(address, '/v1/models', options)) as ModelsList;
  const list = Array.isArray(models?.data) ? models.data : [];
  if (list.length === 0) throw new ServerError('bad-response', `GET /v1/models at ${address.baseUrl} lists no model`);
  const entry = requestedModel ? list.find((m) => m.id === requestedModel) : list[0];
  if (!entry?.id) throw new ServerError('not-found', `the server does not serve "${requestedModel}"; it serves ${list.map((m) => m.id).join(', ')}`);
  const props = (await getJson(address, '/props', options).catch(() => null)) as LlamaProps | null;
  const kind: ServerKind = props?.default_generation_settings ? 'llama.cpp' : entry.owned_by === 'vllm' ? 'vllm' : 'openai';
  const notes: string[] = [];
  const slots = kind === 'llama.cpp' ? await probe(address, '/slots', options, 'start llama-server with --slots to see its slots', notes) : false;
  const metrics = kind === 'openai' ? false : await probe(address, '/metrics', options, kind === 'llama.cpp' ? 'start llama-server with --metrics to see its batching counters' : 'this vLLM serves no /metrics', notes);
  if (kind === 'openai') notes.push('this server reports no batching counters: the cohort view shows only what its streams deliver');
  const contextTokens = props?.default_generation_settings?.n_ctx ?? entry.max_model_len ?? 0;
  const server: ServerInfo = { kind, baseUrl: address.baseUrl, ...(props?.total_slots ? { numSlots: props.total_slots } : {}), endpoints: { slots, metrics }, notes };
  const info: ModelInfo = {
    name: entry.id,
    arch: kind,
    numLayers: 0,
    hiddenSize: 0,
    vocabSize: entry.meta?.n_vocab ?? 0,
    maxPositionEmbeddings: entry.meta?.n_ctx_train ?? contextTokens,
    dtypes: [],
    numParams: entry.meta?.n_params ?? 0,
    weightBytes: entry.meta?.size ?? 0,
    blockSize: 0,
    numBlocks: 0,
    kvBytesPerToken: 0,
    contextTokens,
    server,
  };
  return { info, server, modelId: entry.id };
}

/** Whether a monitoring endpoint answers; why not goes to `notes`. A 401 here still means the key is wrong. */
async function probe(address: ServerAddress, path: string, options: ConnectOptions, hint: string, notes: string[]): Promise<boolean> {
  try {
    await getResponse(address, path, options);
    return true;
  } catch (err) {
    if (err instanceof ServerError && err.code === 'unauthorized') throw err;
    notes.push(`${path} is not available (${(err as Error).message.split(':')[0]}): ${hint}`);
    return false;
  }
}
