// Matmul with q4_K weights (ggml super-block of 256: f16 d, f16 dmin, 12 bytes of 6-bit scales and
// mins, u8 q[128]; 144 bytes), dequantized in registers as d*sc*q - dmin*m. Twin: matmulQuant.
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
@group(0) @binding(2) var<storage, read> w: array<u32>;             // [n, k / 256] blocks of 36 words
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

fn bytes4(q: u32) -> vec4<u32> {
  return vec4<u32>(q, q >> 8u, q >> 16u, q >> 24u) & vec4<u32>(0xffu);
}

// Byte j of the 12 scale bytes of the block at word `base`.
fn scaleByte(base: u32, j: u32) -> u32 {
  return (w[base + 1u + j / 4u] >> ((j % 4u) * 8u)) & 0xffu;
}

// ggml's get_scale_min_k4 for sub-blocks j and j + 1, already multiplied out:
// (d * sc_j, dmin * m_j, d * sc_j+1, dmin * m_j+1).
fn groupScales(base: u32, j: u32) -> vec4<f32> {
  let dm = unpack2x16float(w[base]);
  var out: vec4<f32>;
  for (var s = 0u; s < 2u; s++) {
    let js = j + s;
    var sc: u32;
    var m: u32;
    if (js < 4u) {
      sc = scaleByte(base, js) & 63u;
      m = scaleByte(base, js + 4u) & 63u;
    } else {
      sc = (scaleByte(base, js + 4u) & 0xfu) | ((scaleByte(base, js - 4u) >> 6u) << 4u);
      m = (scaleByte(base, js + 4u) >> 4u) | ((scaleByte(base, js) >> 6u) << 4u);
    }
    out[2u * s] = dm.x * f32(sc);
    out[2u * s + 1u] = dm.y * f32(m);
  }
  return out;
}

fn low4(q: u32, s: vec4<f32>) -> vec4<f32> {
  return s.x * vec4<f32>(bytes4(q) & vec4<u32>(0xfu)) - s.y;
}

fn high4(q: u32, s: vec4<f32>) -> vec4<f32> {
  return s.z * vec4<f32>(bytes4(q) >> vec4<u32>(4u)) - s.w;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (!begin(gid)) { return; }
  let numBlocks = params.k / 256u;
  let rowWords = numBlocks * 36u;
  let r0 = rowOf(gid, 0u) * rowWords; let r1 = rowOf(gid, 1u) * rowWords;
  let r2 = rowOf(gid, 2u) * rowWords; let r3 = rowOf(gid, 3u) * rowWords;
  for (var b = 0u; b < numBlocks; b++) {
    let o0 = r0 + b * 36u; let o1 = r1 + b * 36u; let o2 = r2 + b * 36u; let o3 = r3 + b * 36u;
    // 4 groups of 64 elements: 32 low nibbles (scale 2g) then the same bytes' high nibbles (2g + 1)
    for (var g = 0u; g < 4u; g++) {
      let s0 = groupScales(o0, 2u * g); let s1 = groupScales(o1, 2u * g);
      let s2 = groupScales(o2, 2u * g); let s3 = groupScales(o3, 2u * g);
      let xi = b * 64u + g * 16u;
      for (var l = 0u; l < 8u; l++) {
        let q = 4u + 8u * g + l;
        let q0 = w[o0 + q]; let q1 = w[o1 + q]; let q2 = w[o2 + q]; let q3 = w[o3 + q];
        accumulate(low4(q0, s0), low4(q1, s1), low4(q2, s2), low4(q3, s3), xi + l);
        accumulate(high4(q0, s0), high4(q1, s1), high4(q2, s2), high4(q3, s3), xi + 8u + l);
      }
    }
  }
  store(gid.y * TILE, gid.x * ROWS);
}
