// runnerDeviceDescriptor on the Node WebGPU adapter and on adapters that fall short; runsOnCpu on
// described adapters; the default KV budget rule. Does not cover browsers' adapters, whose limits differ.
import { describe, expect, it } from 'vitest';
import { defaultKvBudgetBytes, KV_BUDGET_CEILING_CPU, KV_BUDGET_CEILING_GPU, REQUIRED_MINIMUMS, runnerDeviceDescriptor, runsOnCpu } from './device';
import { kvBytesPerToken } from '../model/kv-types';
import { getNodeDevice } from './testing/node-gpu';

describe('runnerDeviceDescriptor', () => {
  it("gives a device whose storage limits are the adapter's", async () => {
    const device = await getNodeDevice(); // requested through runnerDeviceDescriptor
    expect(device.limits.maxStorageBufferBindingSize).toBeGreaterThan(128 * 2 ** 20);
    expect(device.limits.maxStorageBuffersPerShaderStage).toBeGreaterThanOrEqual(REQUIRED_MINIMUMS.maxStorageBuffersPerShaderStage);
    expect(device.features.has('shader-f16')).toBe(false); // SwiftShader has none: asked only when present
  });

  it('refuses an adapter below a required minimum, naming the limit', () => {
    const limits = { maxStorageBuffersPerShaderStage: 4, maxComputeInvocationsPerWorkgroup: 256, maxComputeWorkgroupStorageSize: 16384 };
    const weak = { features: new Set<string>(), limits } as unknown as GPUAdapter;
    expect(() => runnerDeviceDescriptor(weak)).toThrow(/maxStorageBuffersPerShaderStage = 4; Cohort needs at least 7/);
  });

  it('asks only for features the adapter has', () => {
    const limits = { ...REQUIRED_MINIMUMS, maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 };
    const adapter = { features: new Set(['timestamp-query']), limits } as unknown as GPUAdapter;
    const descriptor = runnerDeviceDescriptor(adapter);
    expect(descriptor.requiredFeatures).toEqual(['timestamp-query']);
    expect(descriptor.requiredLimits).toMatchObject({ maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 });
  });
});

describe('runsOnCpu', () => {
  const described = (info?: Partial<GPUAdapterInfo>) => (info ? { adapterInfo: { vendor: '', architecture: '', description: '', isFallbackAdapter: false, ...info } } : {}) as unknown as GPUDevice;

  it('tells SwiftShader and fallback adapters from GPUs', async () => {
    expect(runsOnCpu(await getNodeDevice())).toBe(process.env.COHORT_GPU !== 'native'); // SwiftShader unless asked otherwise
    expect(runsOnCpu(described({ isFallbackAdapter: true }))).toBe(true);
    expect(runsOnCpu(described({ vendor: 'google', architecture: 'swiftshader' }))).toBe(true);
    expect(runsOnCpu(described({ vendor: 'nvidia', architecture: 'hopper', description: 'NVIDIA H200' }))).toBe(false);
    expect(runsOnCpu(described())).toBe(false); // no adapterInfo: an older browser, taken as a GPU
  });
});

describe('defaultKvBudgetBytes', () => {
  const GiB = 2 ** 30;
  const MiB = 2 ** 20;
  const llama1b = kvBytesPerToken('f16', 16, 8 * 64); // Llama-3.2-1B: 32 KiB a token
  const rule = (maxBufferSize: number, onCpu = false, bytesPerToken = llama1b, maxContext = 131072) =>
    defaultKvBudgetBytes({ maxBufferSize, onCpu, bytesPerToken, maxRows: 16, maxContext, blockSize: 16 });

  it('takes half of maxBufferSize, leaving the other half for weights and activations', () => {
    expect(rule(256 * MiB)).toBe(128 * MiB); // WebGPU's guaranteed minimum
    expect(rule(2 * GiB)).toBe(1 * GiB);
  });

  it('stops at 2 GiB on a GPU and at 512 MiB on a CPU adapter', () => {
    expect(rule(16 * GiB)).toBe(KV_BUDGET_CEILING_GPU);
    expect(KV_BUDGET_CEILING_GPU).toBe(2 * GiB);
    expect(rule(4 * GiB, true)).toBe(KV_BUDGET_CEILING_CPU);
    expect(rule(1 * GiB, true)).toBe(512 * MiB); // SwiftShader's 1 GiB maxBufferSize: today's 512 MiB
  });

  it('never takes more than every row can hold at its full context', () => {
    const tiny = kvBytesPerToken('f16', 4, 2 * 32); // the embedded model: 1 KiB a token
    expect(rule(4 * GiB, false, tiny, 4096)).toBe((16 * 4096 + 16) * tiny); // 64 MiB and block 0, not 2 GiB
    expect(rule(4 * GiB, false, tiny, 4001)).toBe((16 * 251 * 16 + 16) * tiny); // whole blocks: 251 of them a row
  });

  it('follows the storage type only through the full-context cap', () => {
    const small = (type: 'f32' | 'q8_0') => rule(4 * GiB, false, kvBytesPerToken(type, 4, 64), 4096);
    expect(small('f32') / small('q8_0')).toBeCloseTo(256 / 68, 10); // 4 bytes a value against 34 per 32
    expect(rule(4 * GiB, false, kvBytesPerToken('f32', 16, 512))).toBe(rule(4 * GiB, false, kvBytesPerToken('q8_0', 16, 512))); // a big model: the device decides
  });
});
