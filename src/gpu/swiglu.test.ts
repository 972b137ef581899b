// Parity of shaders/swiglu.wgsl with the swiglu twin, on a 2D grid of workgroups, and with the
// geglu twin (ACTIVATION 1, gemma) up to gates whose tanh argument overflows. Runs on Node WebGPU
// (SwiftShader here); says nothing about speed.
import { describe, expect, it } from 'vitest';
import { geglu, swiglu } from '../reference/ops';
import { ACTIVATION_CODE } from './kernels';
import { runKernel } from './testing/kernel-harness';
import { scaledError, seededFloats } from './testing/test-util';

/** GPU exp (tanh) vs the twin's f64 exp (tanh). */
const SWIGLU_TOLERANCE = 1e-6;

describe('swiglu.wgsl', () => {
  it('computes silu(gate) * up like the twin, past the end of a ragged grid', async () => {
    const n = 1000;
    const gate = seededFloats(1, n, 12);
    const up = seededFloats(2, n, 3);
    const numGroupsX = 4;
    const result = await runKernel('swiglu', { WORKGROUP_SIZE: 64 }, [new Uint32Array([n, 0, 0, 0]), gate, up, new Float32Array(n)], [numGroupsX, Math.ceil(n / 64 / numGroupsX)], [3]);
    const cpu = new Float32Array(n);
    swiglu(gate, up, n, cpu);
    expect(scaledError(new Float32Array(result.get(3)!), cpu)).toBeLessThanOrEqual(SWIGLU_TOLERANCE);
  });

  it('computes geluTanh(gate) * up like geglu, finite at gates whose tanh argument overflows', async () => {
    const n = 1000;
    const gate = seededFloats(3, n, 8);
    const up = seededFloats(4, n, 3);
    gate.set([-1e30, -1e13, -1e4, -20, 20, 1e4, 1e13, 1e30], 0); // SwiftShader's unclamped tanh gave NaN from |gate| ~ 20
    up.set([1, 1, 1, 1, 1e-30, 1e-30, 1e-30, 1e-30], 0); // keeps the large gates' products in scale
    const result = await runKernel('swiglu', { ACTIVATION: ACTIVATION_CODE.gelu_tanh }, [new Uint32Array([n, 0, 0, 0]), gate, up, new Float32Array(n)], [Math.ceil(n / 64)], [3]);
    const cpu = new Float32Array(n);
    geglu(gate, up, n, cpu);
    expect(scaledError(new Float32Array(result.get(3)!), cpu)).toBeLessThanOrEqual(SWIGLU_TOLERANCE);
  });
});
