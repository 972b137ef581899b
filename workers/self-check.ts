// Runs shaders/residual_add.wgsl on fixed inputs and compares it with its CPU twin, so the page
// can prove the worker's device computes. Not a benchmark and not the model's dispatch path.
import residualAddWgsl from '../shaders/residual_add.wgsl?raw';
import type { SelfCheckResult } from '../src/protocol/api';
import { residualAdd } from '../src/reference/residual-add';

const numElements = 1029; // not a multiple of the workgroup size: exercises the bounds guard
const workgroupSize = 64;
const numPadding = 3;
const sentinel = -4242.5;

/** [numElements] inputs with values the f32 rounding of a + b does not make trivial. */
function selfCheckInputs(): { a: Float32Array<ArrayBuffer>; b: Float32Array<ArrayBuffer> } {
  const a = new Float32Array(numElements);
  const b = new Float32Array(numElements);
  for (let i = 0; i < numElements; i++) {
    a[i] = Math.sin(i) * 100;
    b[i] = Math.cos(i * 0.37) / 3;
  }
  return { a, b };
}

export async function runSelfCheck(device: GPUDevice): Promise<SelfCheckResult> {
  const startMs = performance.now();
  const { a, b } = selfCheckInputs();
  const module = device.createShaderModule({ code: residualAddWgsl });
  const pipeline = await device.createComputePipelineAsync({
    layout: 'auto',
    compute: { module, entryPoint: 'main', constants: { workgroupSize } },
  });
  const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const paramsBuffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
  const aBuffer = device.createBuffer({ size: a.byteLength, usage: storage }); // [numElements] f32
  const bBuffer = device.createBuffer({ size: b.byteLength, usage: storage }); // [numElements] f32
  const outBytes = (numElements + numPadding) * 4;
  const outBuffer = device.createBuffer({ size: outBytes, usage: storage }); // [numElements + padding] f32
  const readBuffer = device.createBuffer({ size: outBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(paramsBuffer, 0, new Uint32Array([numElements, 0, 0, 0]));
  device.queue.writeBuffer(aBuffer, 0, a);
  device.queue.writeBuffer(bBuffer, 0, b);
  device.queue.writeBuffer(outBuffer, 0, new Float32Array(numElements + numPadding).fill(sentinel));

  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [paramsBuffer, aBuffer, bBuffer, outBuffer].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(Math.ceil(numElements / workgroupSize));
  pass.end();
  encoder.copyBufferToBuffer(outBuffer, 0, readBuffer, 0, outBytes);
  device.queue.submit([encoder.finish()]);
  await readBuffer.mapAsync(GPUMapMode.READ);
  const gpuOut = new Float32Array(readBuffer.getMappedRange().slice(0));
  readBuffer.unmap();
  for (const buffer of [paramsBuffer, aBuffer, bBuffer, outBuffer, readBuffer]) buffer.destroy();

  const expected = residualAdd(a, b);
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
