// The worker's kernel self-check on the Node WebGPU device (SwiftShader here): it passes, and its
// output is a + b exactly, as e2e/selfcheck.spec.ts re-checks it in the page. Not the e2e spec.
import { describe, expect, it } from 'vitest';
import { getNodeDevice, loadShader } from '../src/gpu/testing/node-gpu';
import { runSelfCheck } from './self-check';

describe('runSelfCheck', () => {
  it('runs matmul.wgsl with ACCUMULATE and matches its CPU twins bit for bit', async () => {
    const result = await runSelfCheck(await getNodeDevice(), loadShader);
    expect(result.ok).toBe(true);
    expect(result.maxAbsError).toBe(0);
    expect(result.paddingIntact).toBe(true);
    expect(result.values.length).toBe(result.numElements);
    expect(new Set(result.values).size).toBeGreaterThan(result.values.length / 2);
    const mismatches = result.values.filter((value, i) => value !== Math.fround(result.a[i]! + result.b[i]!));
    expect(mismatches).toEqual([]);
  });
});
