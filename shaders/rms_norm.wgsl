// RMSNorm: out[v, i] = weight[i] * (x[src(v), i] / sqrt(mean(x[src(v), :]^2) + eps)), one
// workgroup per vector; with ADD_TO_OUT, out[v, i] += that. Not in place (out must not alias x).
// Twin: reference rmsNorm (then residualAdd for ADD_TO_OUT).
// The sum of squares runs in a fixed strided-then-tree order that depends only on rowLen and
// WORKGROUP_SIZE, so a vector's result never depends on what else is in the step.

override WORKGROUP_SIZE: u32 = 64u;
// Reads vector v from x row rowIndex[v] (the last token of each sampling row before lm_head).
override GATHER_ROWS: bool = false;
// out += the normed vector: gemma's post-norms, x += rmsnorm(o_proj(attn)) and x += rmsnorm(down(act)),
// the residual add fused into the norm as matmul's ACCUMULATE fuses it elsewhere (one dispatch
// fewer per sublayer). The product is rounded to f32 before the add, as the twin's temp then add.
override ADD_TO_OUT: bool = false;

struct Params {
  numVecs: u32,
  rowLen: u32,
  eps: f32,
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;            // [*, rowLen]
@group(0) @binding(2) var<storage, read> weight: array<f32>;       // [rowLen]
@group(0) @binding(3) var<storage, read> rowIndex: array<u32>;     // [numVecs] (GATHER_ROWS)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;    // [numVecs, rowLen] (ADD_TO_OUT: read too)

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  // 2D grid of workgroups: numVecs can exceed maxComputeWorkgroupsPerDimension.
  let v = wid.x + wid.y * groups.x;
  if (v >= params.numVecs) { return; }  // uniform per workgroup: barriers stay in uniform flow
  let n = params.rowLen;
  var src = v;
  if (GATHER_ROWS) { src = rowIndex[v]; }
  let base = src * n;
  var sum = 0.0;
  for (var i = lid; i < n; i += WORKGROUP_SIZE) {
    let value = x[base + i];
    sum += value * value;
  }
  partial[lid] = sum;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) { partial[lid] += partial[lid + stride]; }
    workgroupBarrier();
  }
  let invRms = 1.0 / sqrt(partial[0] / f32(n) + params.eps);
  for (var i = lid; i < n; i += WORKGROUP_SIZE) {
    let normed = weight[i] * (x[base + i] * invRms);
    if (ADD_TO_OUT) {
      out[v * n + i] = out[v * n + i] + normed;
    } else {
      out[v * n + i] = normed;
    }
  }
}
