// Test-only: runs registered kernels, one or several passes in order (explicit layouts from
// kernels.ts, pipelines cached across runs), on the Node WebGPU device and reads chosen buffers back. Not used by product code.
import { KERNELS, type KernelName } from '../kernels';
import { getNodeDevice, loadShader } from './node-gpu';
import type { Overrides } from '../kernels';
import { PipelineCache } from '../pipeline-cache';

export type HostData = ArrayBufferView | ArrayBuffer;

let cachePromise: Promise<PipelineCache> | undefined;

function bytesOf(data: HostData): Uint8Array {
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export function testPipelineCache(): Promise<PipelineCache> {
  cachePromise ??= getNodeDevice().then((device) => new PipelineCache(device, loadShader));
  return cachePromise;
}

/**
 * One dispatch of `kernel`; bindings[i] is binding i's initial contents. Returns the contents
 * after the dispatch of every binding listed in readBack, by binding number.
 */
export function runKernel(
  kernel: KernelName,
  overrides: Overrides,
  bindings: HostData[],
  workgroups: [number, number?, number?],
  readBack: number[],
): Promise<Map<number, ArrayBuffer>> {
  return runPasses(bindings, [{ kernel, overrides, workgroups, bind: bindings.map((_, i) => i) }], readBack);
}

/** One dispatch of a multi-pass run: its kernel binds data[bind[i]] at binding i. */
export interface Pass {
  kernel: KernelName;
  overrides?: Overrides;
  workgroups: [number, number?, number?];
  bind: number[];
}

/**
 * Dispatches `passes` in order in one compute pass over buffers made from `data` (the first
 * binding of every pass is its uniform params); returns data[i] after the run for i in readBack.
 */
export async function runPasses(data: HostData[], passes: Pass[], readBack: number[]): Promise<Map<number, ArrayBuffer>> {
  const cache = await testPipelineCache();
  const device = cache.device;
  const pipelines = await Promise.all(passes.map((p) => cache.prepare(p.kernel, p.overrides ?? {})));
  device.pushErrorScope('validation');
  const uniform = new Set(passes.flatMap((p) => p.bind.filter((_, i) => KERNELS[p.kernel].bindings[i]?.[1] === 'uniform')));
  const buffers = data.map((bytesData, i) => {
    const bytes = bytesOf(bytesData);
    const size = Math.max(16, Math.ceil(bytes.byteLength / 16) * 16);
    const usage = (uniform.has(i) ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const buffer = device.createBuffer({ size, usage, mappedAtCreation: true });
    new Uint8Array(buffer.getMappedRange()).set(bytes);
    buffer.unmap();
    return buffer;
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  passes.forEach((p, j) => {
    pass.setPipeline(pipelines[j]!);
    pass.setBindGroup(0, cache.bindGroup(p.kernel, p.bind.map((i) => ({ buffer: buffers[i]! }))));
    pass.dispatchWorkgroups(p.workgroups[0], p.workgroups[1] ?? 1, p.workgroups[2] ?? 1);
  });
  pass.end();
  const staging = readBack.map((i) => {
    const buffer = device.createBuffer({ size: buffers[i]!.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(buffers[i]!, 0, buffer, 0, buffers[i]!.size);
    return buffer;
  });
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error) throw new Error(`${passes.map((p) => p.kernel).join(', ')}: ${error.message}`);
  const out = new Map<number, ArrayBuffer>();
  for (const [j, i] of readBack.entries()) {
    await staging[j]!.mapAsync(GPUMapMode.READ);
    out.set(i, staging[j]!.getMappedRange().slice(0, bytesOf(data[i]!).byteLength));
    staging[j]!.unmap();
    staging[j]!.destroy();
  }
  for (const buffer of buffers) buffer.destroy();
  return out;
}
