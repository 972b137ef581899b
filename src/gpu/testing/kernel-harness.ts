// Test-only: runs one registered kernel (explicit layout from kernels.ts, pipelines cached across
// runs) on the Node WebGPU device and reads chosen bindings back. Not used by product code.
import { KERNELS, type KernelName } from '../kernels';
import { getNodeDevice, loadShader } from './node-gpu';
import { PipelineCache, type Overrides } from '../pipeline-cache';

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
export async function runKernel(
  kernel: KernelName,
  overrides: Overrides,
  bindings: HostData[],
  workgroups: [number, number?, number?],
  readBack: number[],
): Promise<Map<number, ArrayBuffer>> {
  const cache = await testPipelineCache();
  const device = cache.device;
  const pipeline = await cache.prepare(kernel, overrides);
  device.pushErrorScope('validation');
  const kinds = KERNELS[kernel].bindings;
  const buffers = bindings.map((data, i) => {
    const bytes = bytesOf(data);
    const size = Math.max(16, Math.ceil(bytes.byteLength / 16) * 16);
    const usage = (kinds[i] === 'uniform' ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
    const buffer = device.createBuffer({ size, usage, mappedAtCreation: true });
    new Uint8Array(buffer.getMappedRange()).set(bytes);
    buffer.unmap();
    return buffer;
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, cache.bindGroup(kernel, buffers.map((buffer) => ({ buffer }))));
  pass.dispatchWorkgroups(workgroups[0], workgroups[1] ?? 1, workgroups[2] ?? 1);
  pass.end();
  const staging = readBack.map((i) => {
    const buffer = device.createBuffer({ size: buffers[i]!.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(buffers[i]!, 0, buffer, 0, buffers[i]!.size);
    return buffer;
  });
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error) throw new Error(`${kernel}: ${error.message}`);
  const out = new Map<number, ArrayBuffer>();
  for (const [j, i] of readBack.entries()) {
    await staging[j]!.mapAsync(GPUMapMode.READ);
    out.set(i, staging[j]!.getMappedRange().slice(0, bytesOf(bindings[i]!).byteLength));
    staging[j]!.unmap();
    staging[j]!.destroy();
  }
  for (const buffer of buffers) buffer.destroy();
  return out;
}
