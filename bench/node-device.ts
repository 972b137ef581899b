// The Node benchmarks' GPU: the shared npm-webgpu device (node-gpu.ts) with the names reports
// use for it. Naming only; the device itself and its SwiftShader/native choice live in node-gpu.ts.
import { createRequire } from 'node:module';
import { getNodeDevice } from '../src/gpu/testing/node-gpu';
import { slug } from './grid';

export interface NodeBenchDevice {
  device: GPUDevice;
  /** Vendor, architecture and driver description, for the report's text. */
  adapter: string;
  /** For file names: `machineOverride` if given, else the adapter's vendor and architecture. */
  machine: string;
}

export async function nodeBenchDevice(machineOverride?: string): Promise<NodeBenchDevice> {
  const device = await getNodeDevice();
  // Dawn's Node binding exposes the adapter's info on the device.
  const info = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  const adapter = [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ') || 'unknown adapter';
  return { device, adapter, machine: machineOverride || slug([info?.vendor, info?.architecture].filter(Boolean).join(' ')) };
}

/** The npm webgpu (Dawn) build the benchmarks run on, for their reports. */
export function webgpuVersion(): string {
  try {
    return (createRequire(import.meta.url)('webgpu/package.json') as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
