// The one GPUDeviceDescriptor the runner asks for, shared by the worker and the Node tests:
// wanted features when present, storage limits raised to the adapter's, minimums checked; and the
// default KV budget read from them. Not device acquisition (workers/gpu-device.ts, src/gpu/testing/node-gpu.ts)
// nor the pool's layout (kv-arena.ts).

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
  maxComputeWorkgroupStorageSize: 16 * (2 * 16 + 16 * 16), // paged attention's 16 split states of 16 dims, four lanes each (sample needs 1 KiB)
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
 * Whether the device runs on the CPU (SwiftShader, or any fallback adapter): there, work spread
 * over more workgroups than the cores can run at once only adds dispatch cost, so GpuRunner
 * leaves split-KV decode off. Old browsers without GPUDevice.adapterInfo count as GPUs.
 */
export function runsOnCpu(device: GPUDevice): boolean {
  const info = (device as Partial<Pick<GPUDevice, 'adapterInfo'>>).adapterInfo;
  return info !== undefined && (info.isFallbackAdapter === true || info.architecture === 'swiftshader' || /swiftshader/i.test(info.description));
}

/** The KV pool's share of the largest buffer the device offers: the other half is headroom for weights and activations. */
export const KV_BUDGET_FRACTION_OF_MAX_BUFFER = 0.5;
/** Most a default pool takes on a GPU: maxBufferSize says nothing of free memory, and 2 GiB holds 64k f16 tokens of Llama-3.2-1B. */
export const KV_BUDGET_CEILING_GPU = 2 * 2 ** 30;
/** Most a default pool takes on a CPU adapter (SwiftShader, fallback), where it lives in system memory beside the weights. */
export const KV_BUDGET_CEILING_CPU = 512 * 2 ** 20;

export interface KvBudgetInputs {
  /** The device's maxBufferSize (the only adapter figure that grows with its memory). */
  maxBufferSize: number;
  /** runsOnCpu(device) */
  onCpu: boolean;
  /** K + V bytes of one token across every layer, in the pool's storage type (src/model/kv-types.ts). */
  bytesPerToken: number;
  /** Rows a step carries and positions each may reach, in blocks of blockSize: the most KV the running rows can ever hold. */
  maxRows: number;
  maxContext: number;
  blockSize: number;
}

/**
 * The KV budget when the user gives none. WebGPU reports no memory size, so the rule reads the one
 * limit that scales with it: half of maxBufferSize (Dawn derives it from the driver's largest
 * allocation; WebGPU guarantees 256 MiB, so never under 128 MiB), at most 2 GiB on a GPU and 512 MiB on
 * a CPU adapter, and never more than every row at its full context (more would only ever hold the
 * prefix cache). A user's kvCacheBytes replaces this rule; the pool is still capped by what one
 * binding can address (kv-arena.ts).
 */
export function defaultKvBudgetBytes(inputs: KvBudgetInputs): number {
  const byDevice = Math.floor(inputs.maxBufferSize * KV_BUDGET_FRACTION_OF_MAX_BUFFER);
  const ceiling = inputs.onCpu ? KV_BUDGET_CEILING_CPU : KV_BUDGET_CEILING_GPU;
  // every row's blocks at full context, and block 0 (reserved)
  const fullUse = (inputs.maxRows * Math.ceil(inputs.maxContext / inputs.blockSize) + 1) * inputs.blockSize * inputs.bytesPerToken;
  return Math.min(byDevice, ceiling, fullUse);
}
