// The engine a worker scope serves: the local host or a server backend (BackendRouter) plus the calls
// that need this scope's WebGPU device, built once on import. Shared by both worker kinds; exposes nothing.
import { GpuRunner } from '../src/gpu/gpu-runner';
import { bundledShaderSource } from '../src/gpu/shader-sources';
import { BackendRouter } from '../src/host/backend-router';
import { EngineHost } from '../src/host/engine-host';
import type { EngineApi, GpuInfo, SelfCheckResult } from '../src/protocol/api';
import { cacheStorageStore } from './download-store';
import { acquireGpu, describeGpu, liveGpuBuffers } from './gpu-device';
import { runSelfCheck } from './self-check';

async function device(): Promise<GPUDevice> {
  const gpu = await acquireGpu();
  if (gpu.status !== 'ok') throw new Error(`No WebGPU device: ${gpu.message}`);
  return gpu.device;
}

const watched = new WeakSet<GPUDevice>();

/** A lost device (driver reset, destroy()) sends the host to rebuild its runner on a new one. */
function watchForLoss(gpu: GPUDevice): GPUDevice {
  if (!watched.has(gpu)) {
    watched.add(gpu);
    void gpu.lost.then((info) => engine.local.recoverRunner(`GPU device lost (${info.reason}${info.message ? `: ${info.message}` : ''})`));
  }
  return gpu;
}

/** The router plus the calls that need this worker's device and scope. */
export class WorkerEngine extends BackendRouter implements EngineApi {
  gpuInfo(): Promise<GpuInfo> {
    return describeGpu();
  }

  async selfCheck(): Promise<SelfCheckResult> {
    return runSelfCheck(await device());
  }

  async debugCloseWorker(): Promise<void> {
    setTimeout(() => self.close(), 0); // after this call's reply
  }

  /** Debug read (not in EngineApi; the soak asks it): GPU buffers alive on this worker's device. */
  async debugGpuMemory(): Promise<{ bytes: number; count: number }> {
    return liveGpuBuffers();
  }

  async debugLoseDevice(): Promise<void> {
    const gpu = await acquireGpu();
    if (gpu.status === 'ok') gpu.device.destroy();
  }
}

/** The engine of this worker's scope: one per dedicated worker, one for every tab in the shared one. */
export const engine = new WorkerEngine(
  new EngineHost({
    makeRunner: async (model, kv) => GpuRunner.create({ device: watchForLoss(await device()), model, shaderSource: bundledShaderSource, kvCacheType: kv.kvCacheType, kvBudgetBytes: kv.kvCacheBytes }),
    embeddedModelUrl: new URL(`${import.meta.env.BASE_URL}models/cohort-tiny/`, self.location.origin).href,
    pageOrigin: self.location.origin,
    downloadStore: cacheStorageStore(),
  }),
  { pageOrigin: self.location.origin },
);

