// The browser's ShaderSource: every kernel's WGSL bundled by Vite as text (?raw imports).
// Not used in Node tests, which read shaders/ from disk (testing/node-gpu.ts loadShader).
import embedding from '../../shaders/embedding.wgsl?raw';
import matmul from '../../shaders/matmul.wgsl?raw';
import pagedAttention from '../../shaders/paged_attention.wgsl?raw';
import penalties from '../../shaders/penalties.wgsl?raw';
import rmsNorm from '../../shaders/rms_norm.wgsl?raw';
import ropeKvWrite from '../../shaders/rope_kv_write.wgsl?raw';
import sample from '../../shaders/sample.wgsl?raw';
import swiglu from '../../shaders/swiglu.wgsl?raw';
import tokenMask from '../../shaders/token_mask.wgsl?raw';
import type { ShaderSource } from './pipeline-cache';

const SOURCES: Record<string, string> = {
  embedding,
  rms_norm: rmsNorm,
  matmul,
  rope_kv_write: ropeKvWrite,
  paged_attention: pagedAttention,
  swiglu,
  penalties,
  token_mask: tokenMask,
  sample,
};

export const bundledShaderSource: ShaderSource = (file) => {
  const source = SOURCES[file];
  if (source === undefined) throw new Error(`no bundled shader ${file}.wgsl`);
  return source;
};
