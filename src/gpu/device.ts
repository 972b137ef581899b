// The one GPUDeviceDescriptor the runner asks for, shared by the worker and the Node tests:
// wanted features when present, storage limits raised to the adapter's, minimums checked.
// Not device acquisition itself (workers/gpu-device.ts, src/gpu/testing/node-gpu.ts) nor buffer sizing.

/** Used by kernels when present (DESIGN: f16 only where the adapter has it). */
const WANTED_FEATURES: GPUFeatureName[] = ['subgroups', 'timestamp-query', 'shader-f16'];

/** Raised to the adapter's maximum: weights and the KV pool are bound whole. */
const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

/** What the kernels need beyond WebGPU's defaults; an adapter below any of these is refused. */
export const REQUIRED_MINIMUMS = {
  maxStorageBuffersPerShaderStage: 7, // rope_kv_write and paged_attention bind 7 storage buffers (WebGPU guarantees 8)
  maxComputeInvocationsPerWorkgroup: 64,
  maxComputeWorkgroupStorageSize: 16 * (4 * 8 * 16 + 4 * 8), // paged attention's q . k partials, vec4s of 4 head quads x 8 keys x 16 lanes, and scores ('gpu' setting; sample needs 1 KiB)
} as const;

type AdapterLike = Pick<GPUAdapter, 'features' | 'limits'>;

/** The device request for this adapter; throws a sentence naming the limit it falls short on. */
export function runnerDeviceDescriptor(adapter: AdapterLike, label = 'cohort'): GPUDeviceDescriptor {
  for (const [name, minimum] of Object.entries(REQUIRED_MINIMUMS)) {
    const have = adapter.limits[name as keyof typeof REQUIRED_MINIMUMS];
    if (have < minimum) throw new Error(`this GPU offers ${name} = ${have}; Cohort needs at least ${minimum}`);
  }
  const requiredLimits: Record<string, number> = {};
  for (const name of RAISED_LIMITS) requiredLimits[name] = adapter.limits[name];
  return { label, requiredFeatures: WANTED_FEATURES.filter((f) => adapter.features.has(f)), requiredLimits };
}

/**
 * Whether the device runs on the CPU (SwiftShader, or any fallback adapter): there, every
 * invocation, workgroup and barrier costs a fixed few microseconds, so GpuRunner picks the 'cpu'
 * kernel setting (kernels.ts KernelSetting). Old browsers without GPUDevice.adapterInfo count as GPUs.
 */
export function runsOnCpu(device: GPUDevice): boolean {
  const info = (device as Partial<Pick<GPUDevice, 'adapterInfo'>>).adapterInfo;
  return info !== undefined && (info.isFallbackAdapter === true || info.architecture === 'swiftshader' || /swiftshader/i.test(info.description));
}
