// The Node benchmarks' GPU and model files: the shared npm-webgpu device (node-gpu.ts) with the names
// reports use for it, and a model path read as dropped files. The SwiftShader/native choice lives in node-gpu.ts.
import { openAsBlob, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
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

/**
 * The files a person would drop on the page: a .gguf, or a folder's Hugging Face files (its GGUF
 * copies left out, as the embedded model's folder holds both), or a folder's one .gguf.
 */
export async function modelFiles(path: string): Promise<File[]> {
  let paths = [path];
  if (statSync(path).isDirectory()) {
    const files = readdirSync(path).map((name) => join(path, name)).filter((p) => statSync(p).isFile());
    const isGguf = (p: string): boolean => p.toLowerCase().endsWith('.gguf');
    paths = files.some((p) => basename(p) === 'config.json') ? files.filter((p) => !isGguf(p)) : files.filter(isGguf);
  }
  // openAsBlob reads lazily, so a multi-GB GGUF is never one buffer.
  return Promise.all(paths.map(async (p) => new File([await openAsBlob(p)], basename(p))));
}
