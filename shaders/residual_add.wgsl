// Residual add: out[i] = a[i] + b[i] over numElements f32 values (the transformer's skip path).
// Not in-place and not fused: `out` must not alias `a` or `b`. CPU twin: src/reference/residual-add.ts.

// Threads per workgroup; the dispatch must cover numElements with a 2D grid of workgroups.
override workgroupSize: u32 = 256u;

struct Params {
  numElements: u32,
  // Uniform structs are laid out in 16-byte rows; the padding keeps host and WGSL sizes equal.
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;   // [numElements]
@group(0) @binding(2) var<storage, read> b: array<f32>;   // [numElements]
@group(0) @binding(3) var<storage, read_write> out: array<f32>; // [>= numElements]

@compute @workgroup_size(workgroupSize)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) numWorkgroups: vec3<u32>) {
  // Rows of workgroups (y) let tensors exceed maxComputeWorkgroupsPerDimension * workgroupSize.
  let i = gid.x + gid.y * numWorkgroups.x * workgroupSize;
  if (i >= params.numElements) {
    return;
  }
  out[i] = a[i] + b[i];
}
