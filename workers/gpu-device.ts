// Acquires the worker's WebGPU adapter and device once, with the features and limits the
// runner asks for (src/gpu/device.ts); reports why not when it cannot. Not a buffer or pipeline manager.
import { runnerDeviceDescriptor } from '../src/gpu/device';
import type { GpuInfo } from '../src/protocol/api';

export type GpuAcquisition =
  | { status: 'ok'; adapter: GPUAdapter; device: GPUDevice }
  | Extract<GpuInfo, { status: 'unavailable' }>;

let acquisition: Promise<GpuAcquisition> | undefined;

/** GPU buffers created on this worker's devices and not yet destroyed: a debug read (debugGpuMemory). */
const liveBuffers = { bytes: 0, count: 0 };

/** Counts the device's buffers in and out of liveBuffers; creation and destruction are unchanged. */
function tallyBuffers(device: GPUDevice): void {
  const create = device.createBuffer.bind(device);
  device.createBuffer = (descriptor) => {
    const buffer = create(descriptor);
    liveBuffers.bytes += buffer.size;
    liveBuffers.count++;
    const destroy = buffer.destroy.bind(buffer);
    let destroyed = false;
    buffer.destroy = () => {
      if (!destroyed) {
        destroyed = true;
        liveBuffers.bytes -= buffer.size;
        liveBuffers.count--;
      }
      destroy();
    };
    return buffer;
  };
}

export function liveGpuBuffers(): { bytes: number; count: number } {
  return { ...liveBuffers };
}

async function acquire(): Promise<GpuAcquisition> {
  if (!('gpu' in navigator) || !navigator.gpu) {
    return { status: 'unavailable', reason: 'no-webgpu', message: 'navigator.gpu is missing in the worker' };
  }
  const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) {
    return { status: 'unavailable', reason: 'no-adapter', message: 'navigator.gpu.requestAdapter() returned null' };
  }
  try {
    const device = await adapter.requestDevice(runnerDeviceDescriptor(adapter));
    tallyBuffers(device);
    device.lost.then(() => {
      acquisition = undefined; // the next call acquires a fresh device
    });
    return { status: 'ok', adapter, device };
  } catch (error) {
    return { status: 'unavailable', reason: 'device-failed', message: String(error) };
  }
}

export function acquireGpu(): Promise<GpuAcquisition> {
  acquisition ??= acquire();
  return acquisition;
}

function limitsRecord(limits: GPUSupportedLimits): Record<string, number> {
  const record: Record<string, number> = {};
  // Limits are accessor properties on the prototype, so enumerate the prototype chain.
  for (let proto: object | null = limits; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value: unknown = (limits as unknown as Record<string, unknown>)[name];
      if (typeof value === 'number') record[name] = value;
    }
  }
  return record;
}

export async function describeGpu(): Promise<GpuInfo> {
  const gpu = await acquireGpu();
  if (gpu.status !== 'ok') return gpu;
  const info = gpu.adapter.info;
  return {
    status: 'ok',
    adapter: {
      vendor: info.vendor,
      architecture: info.architecture,
      device: info.device,
      description: info.description,
      // Older Chrome exposed this on the adapter, newer on info.
      isFallbackAdapter: Boolean((info as { isFallbackAdapter?: boolean }).isFallbackAdapter),
    },
    features: [...gpu.adapter.features].sort(),
    deviceFeatures: [...gpu.device.features].sort(),
    limits: limitsRecord(gpu.device.limits),
  };
}
