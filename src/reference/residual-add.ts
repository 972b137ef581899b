// CPU twin of shaders/residual_add.wgsl: out[i] = a[i] + b[i] in f32.
// Not a GPU path and not in-place by default; `out` may alias `a` when the caller wants that.

/**
 * Adds two [numElements] f32 vectors. The f64 sum of two f32 values rounds to the same f32 as
 * an f32 add, so this matches the kernel bit for bit (denormals aside: GPUs may flush them).
 */
export function residualAdd(a: Float32Array, b: Float32Array, out: Float32Array = new Float32Array(a.length)): Float32Array {
  if (b.length !== a.length || out.length < a.length) {
    throw new Error(`residualAdd: lengths a=${a.length} b=${b.length} out=${out.length}`);
  }
  for (let i = 0; i < a.length; i++) out[i] = a[i]! + b[i]!;
  return out;
}
