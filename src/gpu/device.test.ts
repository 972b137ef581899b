// requestRunnerDevice on the Node WebGPU adapter: raised storage limits, clear refusals.
// Does not cover browsers' adapters, whose limits differ.
import { describe, expect, it } from 'vitest';
import { create } from 'webgpu';
import { requestRunnerDevice } from './device';
import { getNodeDevice } from './node-gpu';

async function nodeAdapter(): Promise<GPUAdapter> {
  await getNodeDevice(); // sets up the Vulkan ICD for this process
  const adapter = await create([]).requestAdapter();
  if (!adapter) throw new Error('no adapter');
  return adapter;
}

describe('requestRunnerDevice', () => {
  it("raises storage binding limits to the adapter's", async () => {
    const adapter = await nodeAdapter();
    const device = await requestRunnerDevice(adapter);
    expect(device.limits.maxStorageBufferBindingSize).toBe(adapter.limits.maxStorageBufferBindingSize);
    expect(device.limits.maxBufferSize).toBe(adapter.limits.maxBufferSize);
    device.destroy();
  });

  it('refuses a tensor larger than the adapter can bind', async () => {
    const adapter = await nodeAdapter();
    const tooBig = adapter.limits.maxStorageBufferBindingSize + 4;
    await expect(requestRunnerDevice(adapter, { minBindingBytes: tooBig })).rejects.toThrow(/storage binding limit/);
  });
});
