// Parity of shaders/swiglu.wgsl with the swiglu twin, on a 2D grid of workgroups.
// Runs on Node WebGPU (SwiftShader here); says nothing about speed.
import { describe, expect, it } from 'vitest';
import { swiglu } from '../reference/ops';
import { runKernel } from './testing/kernel-harness';
import { scaledError, seededFloats } from './testing/test-util';

/** GPU exp vs the twin's f64 exp. */
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
});
