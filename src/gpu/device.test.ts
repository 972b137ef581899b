// runnerDeviceDescriptor on the Node WebGPU adapter and on adapters that fall short; runsOnCpu on
// described adapters. Does not cover browsers' adapters, whose limits differ.
import { describe, expect, it } from 'vitest';
import { REQUIRED_MINIMUMS, runnerDeviceDescriptor, runsOnCpu } from './device';
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
