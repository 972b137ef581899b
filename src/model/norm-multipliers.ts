// Gemma's HF checkpoints store each RMSNorm weight w and multiply by (1 + w); GGUF (llama.cpp's
// converter) and every runner here use the multiplier itself. This turns the first into the second.
import type { ModelConfig, TensorDesc } from './desc';
import { bf16ToF32, f16ToF32 } from './half';
import { ModelFormatError } from './errors';

/** True for the architectures whose HF norm weights are stored as w with (1 + w) applied. */
export function storesNormOffset(config: ModelConfig): boolean {
  return config.arch === 'gemma2' || config.arch === 'gemma3';
}

/** A norm vector (f32, f16 or bf16) as f32 values. */
function vectorValues(file: string, t: TensorDesc): Float32Array {
  const n = t.shape.reduce((a, b) => a * b, 1);
  const view = new DataView(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out = new Float32Array(n); // [n]
  for (let i = 0; i < n; i++) {
    if (t.dtype === 'f32') out[i] = view.getFloat32(4 * i, true);
    else if (t.dtype === 'f16') out[i] = f16ToF32(view.getUint16(2 * i, true));
    else if (t.dtype === 'bf16') out[i] = bf16ToF32(view.getUint16(2 * i, true));
    else throw new ModelFormatError(file, `tensor "${t.name}" is a norm stored as ${t.dtype}`);
  }
  return out;
}

/**
 * For gemma HF weights: every `*norm.weight` replaced by f32 (1 + w), computed in f32 as
 * transformers' Gemma RMSNorm does (`1.0 + self.weight.float()`); other tensors and other
 * architectures unchanged. Call after checkTensors (norms are checked to be vectors there).
 */
export function normsAsMultipliers(file: string, config: ModelConfig, tensors: Map<string, TensorDesc>): Map<string, TensorDesc> {
  if (!storesNormOffset(config)) return tensors;
  const out = new Map<string, TensorDesc>();
  for (const [name, t] of tensors) {
    if (!name.endsWith('norm.weight')) {
      out.set(name, t);
      continue;
    }
    const values = vectorValues(file, t).map((w) => Math.fround(1 + w));
    out.set(name, { name, dtype: 'f32', shape: t.shape, data: new Uint8Array(values.buffer) });
  }
  return out;
}
