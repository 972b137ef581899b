// An EngineClient for Node tests of the page's actions: it records the calls that reach the
// engine and lets a test end each model load when it wants, well or not. Never a real worker.
import type { ModelInfo, ModelSource, SendInput, SessionOptions } from '../../protocol/api';
import type { EngineClient } from '../engine-client';

export interface EngineCall {
  method: 'loadModel' | 'createSession' | 'send' | 'cancel' | 'closeSession' | 'resetSession';
  args: unknown[];
}

export interface FakeEngineClient extends EngineClient {
  calls: EngineCall[];
  /** Ends the oldest load still running: with this model, or failing with this error. */
  finishLoad(model: ModelInfo): void;
  failLoad(error: Error): void;
  /** Forgets calls and loads (between tests). */
  clear(): void;
}

export function modelInfo(name: string): ModelInfo {
  return { name, arch: 'llama', numLayers: 2, hiddenSize: 64, vocabSize: 256, maxPositionEmbeddings: 2048, dtypes: ['f32'], numParams: 1000, weightBytes: 4000, blockSize: 16, numBlocks: 64, kvCacheType: 'f16', kvBytesPerToken: 512, contextTokens: 1024 };
}

const unused = (name: string) => () => Promise.reject(new Error(`${name} is not part of the fake engine client`));

export function fakeEngineClient(): FakeEngineClient {
  let loads: Array<{ resolve(model: ModelInfo): void; reject(error: Error): void }> = [];
  let numSessions = 0;
  const client: FakeEngineClient = {
    calls: [],
    finishLoad(model) {
      const load = loads.shift();
      if (!load) throw new Error('no model load is running');
      load.resolve(model);
    },
    failLoad(error) {
      const load = loads.shift();
      if (!load) throw new Error('no model load is running');
      load.reject(error);
    },
    clear() {
      client.calls = [];
      loads = [];
      numSessions = 0;
    },
    loadModel(source: ModelSource) {
      client.calls.push({ method: 'loadModel', args: [source] });
      return new Promise<ModelInfo>((resolve, reject) => loads.push({ resolve, reject }));
    },
    async createSession(options?: SessionOptions) {
      client.calls.push({ method: 'createSession', args: [options] });
      numSessions += 1;
      return `s${numSessions}`;
    },
    async send(sessionId: string, input: SendInput) {
      client.calls.push({ method: 'send', args: [sessionId, input] });
    },
    async cancel(sessionId: string) {
      client.calls.push({ method: 'cancel', args: [sessionId] });
    },
    async closeSession(sessionId: string) {
      client.calls.push({ method: 'closeSession', args: [sessionId] });
    },
    async resetSession(sessionId: string) {
      client.calls.push({ method: 'resetSession', args: [sessionId] });
    },
    gpuInfo: unused('gpuInfo'),
    selfCheck: unused('selfCheck'),
    waitForTurn: unused('waitForTurn'),
    setMode: unused('setMode'),
    setStepBudget: unused('setStepBudget'),
    subscribe: unused('subscribe'),
    debugCloseWorker: unused('debugCloseWorker'),
    onUnresponsive() {},
    subscribeNotices: unused('subscribeNotices'),
    unsubscribe: unused('unsubscribe'),
    terminate() {},
  };
  return client;
}
