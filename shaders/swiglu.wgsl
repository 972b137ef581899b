// SwiGLU: out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)), elementwise over
// numElements. Not fused into the matmuls; out must not alias gate or up. Twin: reference swiglu.

override WORKGROUP_SIZE: u32 = 64u;

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

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  // 2D grid: numElements can exceed maxComputeWorkgroupsPerDimension * WORKGROUP_SIZE.
  let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
  if (i >= params.numElements) { return; }
  let g = gate[i];
  out[i] = (g / (1.0 + exp(-g))) * up[i];
}
