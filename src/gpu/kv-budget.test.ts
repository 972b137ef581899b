// defaultKvBudgetBytes: the default KV pool from the device's largest buffer, less weights and
// activation headroom, bounded below, and capped on CPU adapters. Pure arithmetic, no GPU.
import { describe, expect, it } from 'vitest';
import { CPU_ADAPTER_KV_BUDGET_BYTES, defaultKvBudgetBytes, KV_ACTIVATION_HEADROOM_BYTES, MIN_DEFAULT_KV_BUDGET_BYTES } from './kv-budget';

const GiB = 2 ** 30;

describe('defaultKvBudgetBytes', () => {
  it('gives a GPU its largest buffer less the weights and the activation headroom', () => {
    expect(defaultKvBudgetBytes({ maxBufferSize: 4 * GiB, onCpu: false, weightBytes: GiB })).toBe(3 * GiB - KV_ACTIVATION_HEADROOM_BYTES);
  });

  it('grows with what the device offers', () => {
    const small = defaultKvBudgetBytes({ maxBufferSize: 2 * GiB, onCpu: false, weightBytes: 0 });
    const large = defaultKvBudgetBytes({ maxBufferSize: 16 * GiB, onCpu: false, weightBytes: 0 });
    expect(large).toBeGreaterThan(small);
    expect(large).toBe(16 * GiB - KV_ACTIVATION_HEADROOM_BYTES);
  });

  it('keeps a floor when the weights fill the estimate', () => {
    expect(defaultKvBudgetBytes({ maxBufferSize: 256 * 2 ** 20, onCpu: false, weightBytes: 200 * 2 ** 20 })).toBe(MIN_DEFAULT_KV_BUDGET_BYTES);
  });

  it('caps a CPU adapter (SwiftShader) at the old fixed size, however large its buffers', () => {
    expect(defaultKvBudgetBytes({ maxBufferSize: 64 * GiB, onCpu: true, weightBytes: 10e6 })).toBe(CPU_ADAPTER_KV_BUDGET_BYTES);
    expect(defaultKvBudgetBytes({ maxBufferSize: 256 * 2 ** 20, onCpu: true, weightBytes: 0 })).toBe(MIN_DEFAULT_KV_BUDGET_BYTES);
  });
});
