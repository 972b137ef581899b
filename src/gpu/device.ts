// Acquires a GPUDevice for the runner: the limits it actually needs (big storage bindings for
// weights and the KV pool) and the optional features it uses. Not a buffer or pipeline manager.

/** Features the runner uses when the adapter has them (timestamps feed StepEvent GPU time). */
const OPTIONAL_FEATURES: GPUFeatureName[] = ['timestamp-query'];

/** What the kernels need beyond WebGPU's defaults; checked against the adapter. */
const REQUIRED_MINIMUMS = {
  maxStorageBuffersPerShaderStage: 5, // kv_write / paged_attention bind 5 storage buffers
  maxComputeInvocationsPerWorkgroup: 64,
  maxComputeWorkgroupStorageSize: 4 * (256 + 2 * 64), // paged_attention's q, scores and slots
} as const;

export interface DeviceRequest {
  /** Largest single buffer the model needs (its biggest weight, a KV layer); default: adapter max. */
  minBindingBytes?: number;
  label?: string;
}

/** Adapter -> device with raised storage limits; throws with the reason when the adapter falls short. */
export async function requestRunnerDevice(adapter: GPUAdapter, request: DeviceRequest = {}): Promise<GPUDevice> {
  const limits = adapter.limits;
  for (const [name, minimum] of Object.entries(REQUIRED_MINIMUMS)) {
    const have = limits[name as keyof typeof REQUIRED_MINIMUMS];
    if (have < minimum) throw new Error(`this GPU offers ${name} = ${have}; Cohort needs ${minimum}`);
  }
  const wantBinding = request.minBindingBytes ?? limits.maxStorageBufferBindingSize;
  if (wantBinding > limits.maxStorageBufferBindingSize || wantBinding > limits.maxBufferSize) {
    throw new Error(`a ${wantBinding}-byte tensor exceeds this GPU's storage binding limit of ${Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize)} bytes`);
  }
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  return adapter.requestDevice({
    label: request.label ?? 'cohort',
    requiredFeatures,
    requiredLimits: {
      // Raised to the adapter's maximum: the KV pool and large embeddings are bound whole.
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      maxStorageBuffersPerShaderStage: Math.max(REQUIRED_MINIMUMS.maxStorageBuffersPerShaderStage, Math.min(8, limits.maxStorageBuffersPerShaderStage)),
    },
  });
}
