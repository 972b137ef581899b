// Node-side WebGPU for tests and the Node benchmarks: one cached Dawn device (npm `webgpu`) and
// WGSL read from shaders/. Never imported by browser code; dispatches go through kernel-harness.ts.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, globals } from 'webgpu';
import { runnerDeviceDescriptor } from '../device';
import type { KernelSetting } from '../kernels';

/**
 * The nearest folder at or above this module that holds shaders/: the repository, whether this
 * runs from src/gpu/testing or from the packed headless bench (bench/device/pack.sh).
 */
function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'shaders'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no shaders/ folder above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

let repoRootCache: string | undefined;

/** A path inside the repository (shaders, the embedded model, bench results). */
export function repoPath(...parts: string[]): string {
  repoRootCache ??= findRepoRoot();
  return resolve(repoRootCache, ...parts);
}

const swiftShaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';

let devicePromise: Promise<GPUDevice> | undefined;
/** Held for the life of the process: if the GPU instance is garbage-collected, Dawn tears down
 *  the instance under the live device and the process aborts on its next queue operation. */
let gpuInstance: GPU | undefined;

/**
 * Dawn looks for the Vulkan loader by soname only. Machines that have Chromium but no system
 * libvulkan1 still ship a loader next to SwiftShader; loading it once, resident and global,
 * lets Dawn's later dlopen("libvulkan.so.1") find it without LD_LIBRARY_PATH.
 */
function preloadVulkanLoader(icdPath: string): void {
  if (process.platform !== 'linux') return;
  const systemDirs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib64'];
  if (systemDirs.some((dir) => existsSync(join(dir, 'libvulkan.so.1')))) return;
  const bundledLoader = join(dirname(icdPath), 'libvulkan.so.1');
  if (!existsSync(bundledLoader)) return;
  const RTLD_NOW = 0x2;
  const RTLD_GLOBAL = 0x100;
  const RTLD_NODELETE = 0x1000; // glibc value; Node does not export it
  try {
    process.dlopen({ exports: {} }, bundledLoader, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  } catch {
    // Expected: the loader is not a Node addon. RTLD_NODELETE keeps it mapped regardless.
  }
}

/** Installs GPUBufferUsage, GPUMapMode, GPUShaderStage... so browser-style code runs in Node. */
function installGlobals(): void {
  const target = globalThis as Record<string, unknown>;
  for (const [name, value] of Object.entries(globals as Record<string, unknown>)) {
    if (target[name] === undefined) target[name] = value;
  }
}

async function createDevice(): Promise<GPUDevice> {
  // COHORT_GPU=native leaves the Vulkan loader to find the machine's own driver.
  if (!process.env.VK_ICD_FILENAMES && process.env.COHORT_GPU !== 'native' && existsSync(swiftShaderIcd)) {
    process.env.VK_ICD_FILENAMES = swiftShaderIcd;
  }
  if (process.env.VK_ICD_FILENAMES) preloadVulkanLoader(process.env.VK_ICD_FILENAMES);
  installGlobals();
  gpuInstance ??= create([]);
  const adapter = await gpuInstance.requestAdapter();
  if (!adapter) {
    throw new Error(
      'No WebGPU adapter in Node. Install Chromium (it ships SwiftShader) or set VK_ICD_FILENAMES ' +
        `to a Vulkan ICD json (default ${swiftShaderIcd}).`,
    );
  }
  const device = await adapter.requestDevice(runnerDeviceDescriptor(adapter, 'cohort-node'));
  device.lost.then((info) => {
    if (info.reason !== 'destroyed') console.error(`WebGPU device lost: ${info.message}`);
    devicePromise = undefined;
  });
  return device;
}

/**
 * The shared Node test device (SwiftShader unless VK_ICD_FILENAMES says otherwise). Run it in
 * a process, not a worker thread: a thread cannot pass VK_ICD_FILENAMES on to the Vulkan loader.
 */
export function getNodeDevice(): Promise<GPUDevice> {
  devicePromise ??= createDevice().catch((error: unknown) => {
    devicePromise = undefined;
    throw error;
  });
  return devicePromise;
}

/** WGSL source of shaders/<name>.wgsl, read from disk (the browser uses ?raw imports instead). */
export function loadShader(name: string): string {
  return readFileSync(repoPath('shaders', `${name}.wgsl`), 'utf8');
}

/**
 * The kernel setting asked for by COHORT_KERNELS ('gpu' or 'cpu'), for benches and tests that run
 * one setting on any adapter; undefined (the adapter's default) when unset. Anything else throws.
 */
export function kernelSettingFromEnv(): KernelSetting | undefined {
  const value = process.env.COHORT_KERNELS;
  if (value === undefined || value === '') return undefined;
  if (value === 'gpu' || value === 'cpu') return value;
  throw new Error(`COHORT_KERNELS=${value}: 'gpu' or 'cpu'`);
}
