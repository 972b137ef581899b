// Node-side WebGPU for tests and the Node benchmarks: one cached Dawn device (npm `webgpu`), WGSL
// read from shaders/, and runCompute, a one-shot dispatch helper. Never imported by browser code.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, globals } from 'webgpu';
import { runnerDeviceDescriptor } from '../device';

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

export type HostArray = Float32Array | Uint32Array | Int32Array;

export interface ComputeBinding {
  binding: number;
  /** 'uniform' for the params struct; 'storage' for everything else (read or read_write). */
  kind: 'uniform' | 'storage';
  /** Initial contents (byte length a multiple of 4); read-back keeps the same length. */
  data: HostArray | ArrayBuffer;
  /** Copy this buffer back after the dispatch. */
  readBack?: boolean;
}

export interface ComputeJob {
  /** Name under shaders/ (without .wgsl) or, when it contains '@compute', WGSL source. */
  shader: string;
  entryPoint?: string;
  /** Values for the shader's `override` constants. */
  constants?: Record<string, number>;
  bindings: ComputeBinding[];
  /** Workgroup counts [x, y, z]; missing dimensions are 1. */
  workgroups: [number, number?, number?];
  device?: GPUDevice;
}

/** Callers' typed arrays may be typed over ArrayBufferLike; Dawn copies from either kind. */
function byteView(data: HostArray | ArrayBuffer): Uint8Array<ArrayBuffer> {
  const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return bytes as Uint8Array<ArrayBuffer>;
}

/** Read-back buffers of one dispatch, by binding number, viewed as the element type asked for. */
export class ComputeResult {
  constructor(private readonly bytesByBinding: Map<number, ArrayBuffer>) {}
  bytes(binding: number): ArrayBuffer {
    const bytes = this.bytesByBinding.get(binding);
    if (!bytes) throw new Error(`binding ${binding} was not marked readBack`);
    return bytes;
  }
  f32(binding: number): Float32Array {
    return new Float32Array(this.bytes(binding));
  }
  u32(binding: number): Uint32Array {
    return new Uint32Array(this.bytes(binding));
  }
  i32(binding: number): Int32Array {
    return new Int32Array(this.bytes(binding));
  }
}

/**
 * Uploads every binding, runs one dispatch, and returns the read-back buffers keyed by binding
 * number. Validation and shader-compile errors are thrown, not left as console warnings.
 */
export async function runCompute(job: ComputeJob): Promise<ComputeResult> {
  const device = job.device ?? (await getNodeDevice());
  const code = job.shader.includes('@compute') ? job.shader : loadShader(job.shader);
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const compileInfo = await module.getCompilationInfo();
  const compileErrors = compileInfo.messages.filter((message) => message.type === 'error');
  if (compileErrors.length > 0) {
    await device.popErrorScope();
    const lines = compileErrors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`);
    throw new Error(`WGSL compile failed:\n${lines.join('\n')}`);
  }
  const pipeline = device.createComputePipeline({
    layout: 'auto',
    compute: { module, entryPoint: job.entryPoint ?? 'main', constants: job.constants ?? {} },
  });

  const gpuBuffers = job.bindings.map((entry) => {
    const bytes = byteView(entry.data);
    if (bytes.byteLength % 4 !== 0) throw new Error(`binding ${entry.binding}: byte length must be a multiple of 4`);
    const size = Math.max(16, bytes.byteLength); // WebGPU rejects empty bindings
    const usage =
      (entry.kind === 'uniform' ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) |
      GPUBufferUsage.COPY_DST |
      GPUBufferUsage.COPY_SRC;
    const buffer = device.createBuffer({ size, usage });
    device.queue.writeBuffer(buffer, 0, bytes);
    return buffer;
  });
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: job.bindings.map((entry, index) => ({ binding: entry.binding, resource: { buffer: gpuBuffers[index]! } })),
  });

  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(job.workgroups[0], job.workgroups[1] ?? 1, job.workgroups[2] ?? 1);
  pass.end();
  const readBacks = job.bindings.flatMap((entry, index) => {
    if (!entry.readBack) return [];
    const source = gpuBuffers[index]!;
    const staging = device.createBuffer({ size: source.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(source, 0, staging, 0, source.size);
    return [{ entry, staging }];
  });
  device.queue.submit([encoder.finish()]);
  const validationError = await device.popErrorScope();
  if (validationError) throw new Error(`WebGPU validation failed: ${validationError.message}`);

  const bytesByBinding = new Map<number, ArrayBuffer>();
  for (const { entry, staging } of readBacks) {
    await staging.mapAsync(GPUMapMode.READ);
    const byteLength = byteView(entry.data).byteLength;
    bytesByBinding.set(entry.binding, staging.getMappedRange(0, staging.size).slice(0, byteLength));
    staging.unmap();
    staging.destroy();
  }
  for (const buffer of gpuBuffers) buffer.destroy();
  return new ComputeResult(bytesByBinding);
}
