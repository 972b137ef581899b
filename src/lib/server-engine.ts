// A CohortEngine over an OpenAI-compatible server (llama-server, vLLM) instead of this page's GPU:
// the same chat.completions and step stream, run in the page itself (no worker, no WebGPU needed).
import type { ModelSource } from '../protocol/api';
import { ServerHost } from '../remote/server-host';
import { CohortEngine, type LoadOptions } from './engine';

/** Where the server is: its base URL (with or without /v1) and, if it wants one, the API key. */
export interface ServerBackend {
  baseUrl: string;
  apiKey?: string;
  /** The served model's id; default the first /v1/models lists. */
  model?: string;
  /** How often the cohort view samples the server's /slots and /metrics, in ms (default 250). */
  sampleEveryMs?: number;
}

/** Connects (rejecting with a ServerError that says why it could not) and returns the engine. */
export async function createServerEngine(backend: ServerBackend, options: LoadOptions = {}): Promise<CohortEngine> {
  const host = new ServerHost({ sampleEveryMs: backend.sampleEveryMs, pageOrigin: globalThis.location?.origin });
  const engine = new CohortEngine(host);
  const source: ModelSource = { kind: 'server', baseUrl: backend.baseUrl, apiKey: backend.apiKey, model: backend.model };
  await engine.load(source, options);
  return engine;
}
