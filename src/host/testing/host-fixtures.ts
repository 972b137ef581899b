// Node test fixtures for EngineHost: a synthetic model served over HTTP and the engine worker
// started on it in a worker thread (CpuRunner), wrapped with comlink. Tests only.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { HostApi } from '../../protocol/api';
import { writeSyntheticModel } from '../../model/testing/synthetic-model-fixtures';

export type { HostApi };

export interface HostFixture {
  api: Comlink.Remote<HostApi>;
  /** The worker's comlink endpoint, for a second wrapper (the library's) beside `api`. */
  endpoint: Comlink.Endpoint;
  origin: string;
  close(): Promise<void>;
}

/** Serves a tiny synthetic llama under /good/ on 127.0.0.1 (every test's model), until close(). */
export async function serveSyntheticModel(): Promise<{ origin: string; close(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'cohort-host-'));
  writeSyntheticModel({ arch: 'llama', format: 'hf', dtype: 'f32', dir: join(dir, 'good'), seed: 3, dims: { hidden: 64, intermediate: 128, layers: 2, heads: 4, kvHeads: 2, headDim: 16 } });
  const server = createServer((req, res) => {
    const path = join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (!path.startsWith(dir) || !existsSync(path)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(path));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no server address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close() {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Serves the synthetic model and starts the Node engine worker on it. */
export async function startHost(numBlocks: number): Promise<HostFixture> {
  const served = await serveSyntheticModel();
  const origin = served.origin;
  // Worker threads take no TypeScript loader flags: a one-line bootstrap imports the entry via tsx.
  const entry = new URL('./engine-worker.node.ts', import.meta.url).href;
  const worker = new Worker(`import('tsx/esm/api').then((m) => m.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`, {
    eval: true,
    workerData: { embeddedModelUrl: `${origin}/good/`, pageOrigin: origin, numBlocks },
  });
  const endpoint = nodeEndpoint(worker);
  const api = Comlink.wrap<HostApi>(endpoint);
  return {
    api,
    endpoint,
    origin,
    async close() {
      await worker.terminate();
      served.close();
    },
  };
}
