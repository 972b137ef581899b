// Runs the model's own matmul kernel (shaders/matmul.wgsl, f32 weights, the ACCUMULATE store
// that fuses the residual add into o_proj/down_proj) on fixed inputs and compares it with its CPU
// twins, so the page can prove the worker's device computes. Not a benchmark, not a model step.
import { runsOnCpu } from '../src/gpu/device';
import { KERNELS, MATMUL_SHAPE, matmulGrid, matmulOverrides, packParams } from '../src/gpu/kernels';
import { PipelineCache, type ShaderSource } from '../src/gpu/pipeline-cache';
import { bundledShaderSource } from '../src/gpu/shader-sources';
import type { SelfCheckResult } from '../src/protocol/api';
import { matmul, residualAdd } from '../src/reference/ops';

const numElements = 1029; // tokens; not a multiple of the kernel's token tile: exercises its guard
const k = 4; // one vec4 step of the weight loop
const numPadding = 3;
const sentinel = -4242.5;

/**
 * y = a + x . w^T with one weight row w = [1, 0, 0, 0] and x[t] = [b[t], ...noise]: the kernel
 * must pick lane 0 of every product, and the result is exactly a + b in f32, which anyone can
 * re-check from the page without a matmul.
 */
function selfCheckInputs(): { a: Float32Array<ArrayBuffer>; b: Float32Array<ArrayBuffer>; x: Float32Array<ArrayBuffer>; w: Float32Array<ArrayBuffer> } {
  const a = new Float32Array(numElements); // [numElements] the residual stream y starts from
  const b = new Float32Array(numElements); // [numElements]
  const x = new Float32Array(numElements * k); // [numElements, k]
  for (let i = 0; i < numElements; i++) {
    a[i] = Math.sin(i) * 100;
    b[i] = Math.cos(i * 0.37) / 3;
    x.set([b[i]!, 1 + i, -0.5 * i, 7], i * k);
  }
  return { a, b, x, w: new Float32Array([1, 0, 0, 0]) }; // w [1, k]
}

/** `shaderSource` is for Node tests; the worker uses the bundled WGSL. */
export async function runSelfCheck(device: GPUDevice, shaderSource: ShaderSource = bundledShaderSource): Promise<SelfCheckResult> {
  const startMs = performance.now();
  const { a, b, x, w } = selfCheckInputs();
  const cache = new PipelineCache(device, shaderSource);
  const shape = MATMUL_SHAPE[runsOnCpu(device) ? 'cpu' : 'gpu']; // the shape the runner takes on this device
  const overrides = matmulOverrides('f32', shape, { accumulate: true });
  const pipeline = await cache.prepare('matmul', overrides);

  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const params = new Uint32Array(KERNELS.matmul.params.length);
  packParams('matmul', { numTokens: numElements, n: 1, k, splitA: 1, splitB: 1, softcap: 0, eps: 0 }, params, new Float32Array(params.buffer), 0);
  const paramsBuffer = device.createBuffer({ size: params.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const xBuffer = device.createBuffer({ size: x.byteLength, usage: storage });
  const wBuffer = device.createBuffer({ size: w.byteLength, usage: storage });
  const biasBuffer = device.createBuffer({ size: 16, usage: storage }); // unread: no HAS_BIAS
  const outBytes = (numElements + numPadding) * 4;
  const yBuffer = device.createBuffer({ size: outBytes, usage: storage }); // [numElements + padding] f32
  const readBuffer = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const y0 = new Float32Array(numElements + numPadding).fill(sentinel);
  y0.set(a);
  device.queue.writeBuffer(paramsBuffer, 0, params);
  device.queue.writeBuffer(xBuffer, 0, x);
  device.queue.writeBuffer(wBuffer, 0, w);
  device.queue.writeBuffer(yBuffer, 0, y0);

  // y2, y3: every row goes to y (two buffers: writable bindings may not alias)
  const unusedOut = [0, 1].map(() => device.createBuffer({ size: 16, usage: storage }));
  const normBuffer = device.createBuffer({ size: 16, usage: storage }); // unread: no NORM_INPUT
  const buffers = [paramsBuffer, xBuffer, wBuffer, biasBuffer, yBuffer, ...unusedOut, normBuffer];
  const bindGroup = cache.bindGroup('matmul', buffers.map((buffer) => ({ buffer })));
  const grid = [0, 0];
  matmulGrid(1, numElements, shape, grid);
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(grid[0]!, grid[1]!);
  pass.end();
  encoder.copyBufferToBuffer(yBuffer, 0, readBuffer, 0, outBytes);
  device.queue.submit([encoder.finish()]);
  await readBuffer.mapAsync(GPUMapMode.READ);
  const gpuOut = new Float32Array(readBuffer.getMappedRange().slice(0));
  readBuffer.unmap();
  for (const buffer of [...buffers, readBuffer]) buffer.destroy();

  const product = new Float32Array(numElements); // [numElements, 1]
  matmul(x, numElements, { rows: 1, cols: k, data: w }, null, product);
  const expected = residualAdd(a, product);
  let maxAbsError = 0;
  for (let i = 0; i < numElements; i++) {
    const error = Math.abs(gpuOut[i]! - expected[i]!);
    maxAbsError = Number.isNaN(error) ? Infinity : Math.max(maxAbsError, error);
  }
  const paddingIntact = gpuOut.subarray(numElements).every((value) => value === sentinel);
  return {
    ok: maxAbsError === 0 && paddingIntact,
    maxAbsError,
    numElements,
    a: Array.from(a),
    b: Array.from(b),
    values: Array.from(gpuOut.subarray(0, numElements)),
    paddingIntact,
    elapsedMs: performance.now() - startMs,
  };
}
