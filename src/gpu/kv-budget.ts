// How many bytes the KV pool takes when the user names none: a pure rule over what the device
// offers and what the model's weights already hold. Not the pool's layout (kv-arena.ts plans that).

export interface KvBudgetInputs {
  /** The device's maxBufferSize (raised to the adapter's by device.ts). */
  maxBufferSize: number;
  /** Whether the adapter runs on the CPU (SwiftShader, a fallback adapter): its memory is the machine's. */
  onCpu: boolean;
  /** Bytes of weights uploaded before the pool. */
  weightBytes: number;
}

/** Left for activations, logits, step metadata and the page's own buffers. */
export const KV_ACTIVATION_HEADROOM_BYTES = 256 * 2 ** 20;
/** The least default pool: a few sessions of 2k tokens on the embedded model, even when weights fill the estimate. */
export const MIN_DEFAULT_KV_BUDGET_BYTES = 64 * 2 ** 20;
/** On a CPU adapter "GPU memory" is this machine's RAM, shared with everything else it runs (tests in parallel). */
export const CPU_ADAPTER_KV_BUDGET_BYTES = 512 * 2 ** 20;

/**
 * The rule: WebGPU tells no device's memory size, but it tells the largest single buffer the
 * driver will allocate (maxBufferSize), and a device that grants an N-byte buffer has, in practice,
 * at least N bytes of memory for this page. So the pool takes maxBufferSize less the weights and
 * KV_ACTIVATION_HEADROOM_BYTES, never under MIN_DEFAULT_KV_BUDGET_BYTES, and on a CPU adapter never
 * over CPU_ADAPTER_KV_BUDGET_BYTES. E.g. a discrete GPU granting 4 GiB buffers with a 1 GiB
 * model gets 2.75 GiB of KV; SwiftShader gets 512 MiB as before. The pool then spreads its layers
 * over as many buffers as it needs (planKvArena), each within maxBufferSize.
 */
export function defaultKvBudgetBytes(inputs: KvBudgetInputs): number {
  const room = inputs.maxBufferSize - inputs.weightBytes - KV_ACTIVATION_HEADROOM_BYTES;
  const budget = Math.max(MIN_DEFAULT_KV_BUDGET_BYTES, room);
  return inputs.onCpu ? Math.min(CPU_ADAPTER_KV_BUDGET_BYTES, budget) : budget;
}
