// Parity of shaders/residual_add.wgsl (run on Node WebGPU) with its CPU twin, bit for bit.
// Does not measure speed; SwiftShader is the usual device here.
import { describe, expect, it } from 'vitest';
import { sampleUniform } from '../engine/rng';
import { residualAdd } from '../reference/residual-add';
import { runCompute } from './testing/node-gpu';

/** [numElements] f32 values spanning many magnitudes, so the f32 rounding of a + b matters. */
function spreadValues(seed: number, numElements: number): Float32Array {
  const values = new Float32Array(numElements);
  for (let i = 0; i < numElements; i++) {
    const sign = sampleUniform(seed, 2 * i) < 0.5 ? -1 : 1;
    const exponent = Math.floor(sampleUniform(seed, 2 * i + 1) * 40) - 20;
    values[i] = sign * (1 + sampleUniform(seed + 1, i)) * 2 ** exponent;
  }
  return values;
}

async function residualAddOnGpu(a: Float32Array, b: Float32Array, workgroupSize: number, workgroups: [number, number]) {
  const sentinel = -12345.5;
  const numPadding = 7;
  const out = new Float32Array(a.length + numPadding).fill(sentinel); // [numElements + padding]
  const params = new Uint32Array([a.length, 0, 0, 0]); // Params { numElements, pad0..2 }
  const result = await runCompute({
    shader: 'residual_add',
    constants: { workgroupSize },
    bindings: [
      { binding: 0, kind: 'uniform', data: params },
      { binding: 1, kind: 'storage', data: a },
      { binding: 2, kind: 'storage', data: b },
      { binding: 3, kind: 'storage', data: out, readBack: true },
    ],
    workgroups,
  });
  const gpuOut = result.f32(3);
  return { values: gpuOut.subarray(0, a.length), padding: Array.from(gpuOut.subarray(a.length)), sentinel };
}

describe('residual_add.wgsl', () => {
  it('matches the CPU twin bit for bit on a 1D grid with a ragged tail', async () => {
    const numElements = 1029; // not a multiple of the workgroup size: the bounds guard must hold
    const a = spreadValues(11, numElements);
    const b = spreadValues(29, numElements);
    const gpu = await residualAddOnGpu(a, b, 64, [Math.ceil(numElements / 64), 1]);
    const cpu = residualAdd(a, b);
    expect(new Uint32Array(gpu.values.slice().buffer)).toEqual(new Uint32Array(cpu.buffer));
    expect(gpu.padding).toEqual(new Array(7).fill(gpu.sentinel));
  });

  it('covers the elements on a 2D grid of workgroups', async () => {
    const numElements = 5000;
    const workgroupSize = 32;
    const numWorkgroupsX = 4; // forces many rows of workgroups (y) for 5000 elements
    const numWorkgroupsY = Math.ceil(numElements / (workgroupSize * numWorkgroupsX));
    const a = spreadValues(3, numElements);
    const b = spreadValues(5, numElements);
    const gpu = await residualAddOnGpu(a, b, workgroupSize, [numWorkgroupsX, numWorkgroupsY]);
    expect(Array.from(gpu.values)).toEqual(Array.from(residualAdd(a, b)));
    expect(gpu.padding).toEqual(new Array(7).fill(gpu.sentinel));
  });
});
