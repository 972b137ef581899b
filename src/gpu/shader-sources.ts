// The browser's ShaderSource: every kernel's WGSL bundled by Vite as text (?raw imports).
// Not used in Node tests, which read shaders/ from disk (testing/node-gpu.ts loadShader).
import bf16 from '../../shaders/matmul_bf16.wgsl?raw';
import embedding from '../../shaders/embedding.wgsl?raw';
import f16 from '../../shaders/matmul_f16.wgsl?raw';
import f32 from '../../shaders/matmul_f32.wgsl?raw';
import kvWrite from '../../shaders/kv_write.wgsl?raw';
import pagedAttention from '../../shaders/paged_attention.wgsl?raw';
import q4_0 from '../../shaders/matmul_q4_0.wgsl?raw';
import q4K from '../../shaders/matmul_q4_K.wgsl?raw';
import q6K from '../../shaders/matmul_q6_K.wgsl?raw';
import q8_0 from '../../shaders/matmul_q8_0.wgsl?raw';
import residualAdd from '../../shaders/residual_add.wgsl?raw';
import rmsNorm from '../../shaders/rms_norm.wgsl?raw';
import rope from '../../shaders/rope.wgsl?raw';
import sample from '../../shaders/sample.wgsl?raw';
import swiglu from '../../shaders/swiglu.wgsl?raw';
import type { ShaderSource } from './pipeline-cache';

const SOURCES: Record<string, string> = {
  embedding,
  rms_norm: rmsNorm,
  matmul_f32: f32,
  matmul_f16: f16,
  matmul_bf16: bf16,
  matmul_q8_0: q8_0,
  matmul_q4_0: q4_0,
  matmul_q4_K: q4K,
  matmul_q6_K: q6K,
  rope,
  kv_write: kvWrite,
  paged_attention: pagedAttention,
  swiglu,
  residual_add: residualAdd,
  sample,
};

export const bundledShaderSource: ShaderSource = (file) => {
  const source = SOURCES[file];
  if (source === undefined) throw new Error(`no bundled shader ${file}.wgsl`);
  return source;
};
