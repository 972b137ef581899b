// The kernel registry: for every kernel, its shaders/<file>.wgsl and the explicit bind group
// layout of its bindings (binding i = entry i). Not a compiler or a cache: see pipeline-cache.ts.
import type { DType } from '../model/desc';

/** uniform = params struct; read = read-only storage; write = read_write storage. */
export type BindingKind = 'uniform' | 'read' | 'write';

export interface KernelSpec {
  /** shaders/<file>.wgsl; its entry point is `main`. */
  file: string;
  /** Binding kinds in binding-number order, all in group 0. */
  bindings: readonly BindingKind[];
}

const matmulBindings = ['uniform', 'read', 'read', 'read', 'write'] as const; // params, x, w, bias, y

export const KERNELS = {
  embedding: { file: 'embedding', bindings: ['uniform', 'read', 'read', 'write'] }, // params, tokens, table, out
  rms_norm: { file: 'rms_norm', bindings: ['uniform', 'read', 'read', 'read', 'write'] }, // params, x, weight, rowIndex, out
  matmul_f32: { file: 'matmul_f32', bindings: matmulBindings },
  matmul_f16: { file: 'matmul_f16', bindings: matmulBindings },
  matmul_bf16: { file: 'matmul_bf16', bindings: matmulBindings },
  matmul_q8_0: { file: 'matmul_q8_0', bindings: matmulBindings },
  matmul_q4_0: { file: 'matmul_q4_0', bindings: matmulBindings },
  matmul_q4_K: { file: 'matmul_q4_K', bindings: matmulBindings },
  matmul_q6_K: { file: 'matmul_q6_K', bindings: matmulBindings },
  rope: { file: 'rope', bindings: ['uniform', 'read', 'read', 'write'] }, // params, tokens, table, x
  kv_write: { file: 'kv_write', bindings: ['uniform', 'read', 'read', 'read', 'read', 'write'] }, // params, tokens, blockTables, k, v, kv
  paged_attention: { file: 'paged_attention', bindings: ['uniform', 'read', 'read', 'read', 'read', 'write'] }, // params, tokens, blockTables, q, kv, out
  swiglu: { file: 'swiglu', bindings: ['uniform', 'read', 'read', 'write'] }, // params, gate, up, out
  residual_add: { file: 'residual_add', bindings: ['uniform', 'read', 'read', 'write'] }, // params, a, b, out
  sample: { file: 'sample', bindings: ['uniform', 'read', 'read', 'write', 'write'] }, // params, logits, infos, weights, sampled
} as const satisfies Record<string, KernelSpec>;

export type KernelName = keyof typeof KERNELS;

/** Every WGSL file a runner needs, for bundling (?raw imports) and load-time checks. */
export const SHADER_FILES: readonly string[] = [...new Set(Object.values(KERNELS).map((k) => k.file))];

export function matmulKernel(dtype: DType): KernelName {
  return `matmul_${dtype}`;
}

/** The embedding kernel's DTYPE override for a stored table dtype. */
export const EMBEDDING_DTYPE_CODE: Record<DType, number> = {
  f32: 0,
  f16: 1,
  bf16: 2,
  q8_0: 3,
  q4_0: 4,
  q4_K: 5,
  q6_K: 6,
};

/** Tokens one matmul invocation covers (the TILE const of matmul_*.wgsl). */
export const MATMUL_TOKENS_PER_INVOCATION = 8;
/** Weight rows one matmul invocation covers (the ROWS const of matmul_*.wgsl). */
export const MATMUL_ROWS_PER_INVOCATION = 4;
