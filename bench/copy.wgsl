// A plain copy, dst[i] = src[i] in 16-byte words: the device's own bandwidth limit, against which
// bench/roofline.ts states every kernel's GB/s. A benchmark's yardstick, not a product kernel.

override WORKGROUP_SIZE: u32 = 256u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;        // [words]
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;  // [words]

// Grid: x, then y past 65535 workgroups; adjacent invocations copy adjacent words.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
  if (i < arrayLength(&src)) { dst[i] = src[i]; }
}
