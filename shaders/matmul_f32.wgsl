// Matmul with f32 weights: y[t, n] = sum_k x[t, k] * w[n, k] (+ bias[n]) (+ y[t, n] if ACCUMULATE).
// Not a large-batch GEMM: one invocation owns 4 weight rows x up to 8 tokens. Twin: reference matmul.
//
// Why this shape: every weight element is read once per 8 tokens (once per step for decode
// cohorts of up to 8 rows), which bounds decode on real GPUs; on SwiftShader it beat
// one-invocation-per-output by ~4x and a workgroup-reduction GEMV by ~15x.
// Batch invariance: every output element sums its k steps in one fixed order whatever the token
// count, so a token's outputs never depend on the other tokens of the step.

override WORKGROUP_SIZE: u32 = 64u;
// Adds a bias vector after the sum (qwen2's q/k/v projections).
override HAS_BIAS: bool = false;
// Adds the result into y instead of overwriting it: the residual add fused into o_proj/down_proj.
override ACCUMULATE: bool = false;

const ROWS: u32 = 4u;  // weight rows per invocation (the 4 lanes of every accumulator)
const TILE: u32 = 8u;  // tokens per invocation (grid y covers numTokens / TILE)

struct Params {
  numTokens: u32,
  n: u32,  // weight rows = outputs per token
  k: u32,  // weight cols = inputs per token
  pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;       // [numTokens, k / 4]
@group(0) @binding(2) var<storage, read> w: array<vec4<f32>>;       // [n, k / 4], k % 4 == 0
@group(0) @binding(3) var<storage, read> bias: array<f32>;          // [n] (HAS_BIAS)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;       // [numTokens, n]

// acc[t][r]: token t0 + t against weight row row0 + r.
var<private> acc: array<vec4<f32>, TILE>;
var<private> numT: u32;   // tokens of this invocation's tile (1..TILE)
var<private> xBase: u32;  // first x vec4 of token t0
var<private> xStride: u32;  // vec4s per token (k / 4)

// One 4-element step of k for all 4 rows and every token of the tile, always in this order.
fn accumulate(w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>, i: u32) {
  for (var t = 0u; t < TILE; t++) {
    if (t < numT) {
      let xv = x[xBase + t * xStride + i];
      acc[t] += vec4<f32>(dot(w0, xv), dot(w1, xv), dot(w2, xv), dot(w3, xv));
    }
  }
}

fn store(t0: u32, row0: u32) {
  for (var t = 0u; t < TILE; t++) {
    if (t < numT) {
      for (var r = 0u; r < ROWS; r++) {
        let n = row0 + r;
        if (n < params.n) {
          var value = acc[t][r];
          if (HAS_BIAS) { value += bias[n]; }
          let at = (t0 + t) * params.n + n;
          if (ACCUMULATE) { value = y[at] + value; }
          y[at] = value;
        }
      }
    }
  }
}

// Sets up the tile; false when this invocation has no rows or tokens to compute.
fn begin(gid: vec3<u32>) -> bool {
  let row0 = gid.x * ROWS;
  let t0 = gid.y * TILE;
  if (row0 >= params.n || t0 >= params.numTokens) { return false; }
  numT = min(TILE, params.numTokens - t0);
  xStride = params.k / 4u;
  xBase = t0 * xStride;
  for (var t = 0u; t < TILE; t++) { acc[t] = vec4<f32>(0.0); }
  return true;
}

// Rows past n read the last row; their results are never stored.
fn rowOf(gid: vec3<u32>, r: u32) -> u32 {
  return min(gid.x * ROWS + r, params.n - 1u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (!begin(gid)) { return; }
  let kv = params.k / 4u;
  let b0 = rowOf(gid, 0u) * kv; let b1 = rowOf(gid, 1u) * kv;
  let b2 = rowOf(gid, 2u) * kv; let b3 = rowOf(gid, 3u) * kv;
  for (var i = 0u; i < kv; i++) {
    accumulate(w[b0 + i], w[b1 + i], w[b2 + i], w[b3 + i], i);
  }
  store(gid.y * TILE, gid.x * ROWS);
}
