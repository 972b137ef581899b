// Matmul with q4_0 weights (ggml block: f16 d, u8 q[16], low nibbles = elements 0..15, high
// nibbles = 16..31; 18 bytes), dequantized in registers as d * (nibble - 8). Twin: matmulQuant.
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
@group(0) @binding(2) var<storage, read> w: array<u32>;             // [n, k / 32] blocks of 18 bytes
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

// Stored bytes as u32 words. Blocks of 34, 18 and 210 bytes leave rows and blocks 2-byte aligned
// only, so reads go through these helpers (o is a byte offset; even where noted).
fn u32At(o: u32) -> u32 {  // o even
  let i = o >> 2u;
  if ((o & 2u) == 0u) { return w[i]; }
  return (w[i] >> 16u) | (w[i + 1u] << 16u);
}

fn halfAt(o: u32) -> f32 {  // o even
  let pair = unpack2x16float(w[o >> 2u]);
  return select(pair.x, pair.y, (o & 2u) != 0u);
}

fn byteAt(o: u32) -> u32 {
  return (w[o >> 2u] >> ((o & 3u) * 8u)) & 0xffu;
}

fn bytes4(q: u32) -> vec4<u32> {
  return vec4<u32>(q, q >> 8u, q >> 16u, q >> 24u) & vec4<u32>(0xffu);
}

fn low4(q: u32, d: f32) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(bytes4(q) & vec4<u32>(0xfu)) - vec4<i32>(8)) * d;
}

fn high4(q: u32, d: f32) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(bytes4(q) >> vec4<u32>(4u)) - vec4<i32>(8)) * d;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (!begin(gid)) { return; }
  let numBlocks = params.k / 32u;
  let rowBytes = numBlocks * 18u;
  let r0 = rowOf(gid, 0u) * rowBytes; let r1 = rowOf(gid, 1u) * rowBytes;
  let r2 = rowOf(gid, 2u) * rowBytes; let r3 = rowOf(gid, 3u) * rowBytes;
  for (var b = 0u; b < numBlocks; b++) {
    let o0 = r0 + b * 18u; let o1 = r1 + b * 18u; let o2 = r2 + b * 18u; let o3 = r3 + b * 18u;
    let d0 = halfAt(o0); let d1 = halfAt(o1); let d2 = halfAt(o2); let d3 = halfAt(o3);
    for (var g = 0u; g < 4u; g++) {
      let q = 2u + 4u * g;
      let q0 = u32At(o0 + q); let q1 = u32At(o1 + q); let q2 = u32At(o2 + q); let q3 = u32At(o3 + q);
      accumulate(low4(q0, d0), low4(q1, d1), low4(q2, d2), low4(q3, d3), b * 8u + g);
      accumulate(high4(q0, d0), high4(q1, d1), high4(q2, d2), high4(q3, d3), b * 8u + 4u + g);
    }
  }
  store(gid.y * TILE, gid.x * ROWS);
}
