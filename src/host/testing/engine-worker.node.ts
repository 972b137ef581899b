// The engine host in a Node worker thread, exposed through comlink's node adapter: the same
// EngineApi the browser worker serves, on CpuRunner. For tests and headless tools, not the page.
import { parentPort, workerData } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { CpuRunner } from '../../reference/cpu-runner';
import { EngineHost } from '../engine-host';

interface NodeWorkerData {
  /** Base URL of a model folder served over HTTP for the 'embedded' source. */
  embeddedModelUrl: string;
  pageOrigin: string;
  numBlocks?: number;
}

const data = workerData as NodeWorkerData;
if (!parentPort) throw new Error('engine-worker.node.ts must run in a worker thread');

const host = new EngineHost({
  makeRunner: async (model, kv) => new CpuRunner(model, { numBlocks: data.numBlocks ?? 257, kvCacheType: kv.kvCacheType }),
  embeddedModelUrl: data.embeddedModelUrl,
  pageOrigin: data.pageOrigin,
});

Comlink.expose(host, nodeEndpoint(parentPort));
