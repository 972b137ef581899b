// SwiGLU: out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)), elementwise over
// numElements; with ACTIVATION 1 GeGLU (gemma), tanh-approximated GELU in silu's place. Used where
// gate and up differ in dtype (matmul's GLU store fuses it otherwise); out must not alias gate or
// up. Twins: reference swiglu, geglu.

override WORKGROUP_SIZE: u32 = 64u;
// The gate activation (kernels.ts ACTIVATION_CODE), as matmul.wgsl's GLU store: 0 silu, 1 gelu_tanh.
override ACTIVATION: u32 = 0u;
const ACT_GELU_TANH: u32 = 1u;
const GELU_C: f32 = 0.7978845608028654;  // sqrt(2 / pi)
const TANH_CLAMP: f32 = 15.0;  // f32 tanh is +-1 before 9; SwiftShader's tanh is NaN for large arguments

struct Params {
  numElements: u32,
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;        // [numElements]
@group(0) @binding(2) var<storage, read> up: array<f32>;          // [numElements]
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // [numElements]

/** The gate activation, matmul.wgsl's `activate` to the bit. */
fn activate(g: f32) -> f32 {
  if (ACTIVATION == ACT_GELU_TANH) {
    return 0.5 * g * (1.0 + tanh(clamp(GELU_C * (g + 0.044715 * g * g * g), -TANH_CLAMP, TANH_CLAMP)));
  }
  return g / (1.0 + exp(-g));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  // 2D grid: numElements can exceed maxComputeWorkgroupsPerDimension * WORKGROUP_SIZE.
  let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
  if (i >= params.numElements) { return; }
  out[i] = activate(gate[i]) * up[i];
}
