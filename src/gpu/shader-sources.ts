// The browser's ShaderSource: every kernel's WGSL bundled by Vite as text (?raw imports).
// Not used in Node tests, which read shaders/ from disk (testing/node-gpu.ts loadShader).
import embedding from '../../shaders/embedding.wgsl?raw';
import kvWrite from '../../shaders/kv_write.wgsl?raw';
import matmul from '../../shaders/matmul.wgsl?raw';
import pagedAttention from '../../shaders/paged_attention.wgsl?raw';
import rmsNorm from '../../shaders/rms_norm.wgsl?raw';
import rope from '../../shaders/rope.wgsl?raw';
import sample from '../../shaders/sample.wgsl?raw';
import swiglu from '../../shaders/swiglu.wgsl?raw';
import type { ShaderSource } from './pipeline-cache';

const SOURCES: Record<string, string> = {
  embedding,
  rms_norm: rmsNorm,
  matmul,
  rope,
  kv_write: kvWrite,
  paged_attention: pagedAttention,
  swiglu,
  sample,
};

export const bundledShaderSource: ShaderSource = (file) => {
  const source = SOURCES[file];
  if (source === undefined) throw new Error(`no bundled shader ${file}.wgsl`);
  return source;
};
