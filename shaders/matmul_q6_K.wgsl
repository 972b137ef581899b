// Matmul with q6_K weights (ggml super-block of 256: u8 ql[128] low 4 bits, u8 qh[64] high 2
// bits, int8 scales[16], f16 d; 210 bytes), dequantized in registers as d*sc*(q - 32). Twin: matmulQuant.
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
@group(0) @binding(2) var<storage, read> w: array<u32>;             // [n, k / 256] blocks of 210 bytes
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

fn int8At(o: u32) -> f32 {
  return f32(bitcast<i32>(byteAt(o) << 24u) >> 24u);
}

// 4 values (q - 32) * ds from packed low nibbles / high bits already combined into 6-bit bytes.
fn six4(q: u32, ds: f32) -> vec4<f32> {
  return ds * vec4<f32>(vec4<i32>(bytes4(q)) - vec4<i32>(32));
}

struct Quarter { q: array<u32, 4>, ds: vec4<f32> }

// Elements 128h + l + {0, 32, 64, 96} .. +3 of the block at byte o (ggml's dequantize_row_q6_K).
fn quarters(o: u32, h: u32, l: u32) -> Quarter {
  let ql = o + 64u * h + l;
  let qlA = u32At(ql);
  let qlB = u32At(ql + 32u);
  let qh = u32At(o + 128u + 32u * h + l);
  let d = halfAt(o + 208u);
  let sc = o + 192u + 8u * h + l / 16u;
  var out: Quarter;
  out.q[0] = (qlA & 0x0f0f0f0fu) | ((qh & 0x03030303u) << 4u);
  out.q[1] = (qlB & 0x0f0f0f0fu) | (((qh >> 2u) & 0x03030303u) << 4u);
  out.q[2] = ((qlA >> 4u) & 0x0f0f0f0fu) | (((qh >> 4u) & 0x03030303u) << 4u);
  out.q[3] = ((qlB >> 4u) & 0x0f0f0f0fu) | (((qh >> 6u) & 0x03030303u) << 4u);
  out.ds = vec4<f32>(d * int8At(sc), d * int8At(sc + 2u), d * int8At(sc + 4u), d * int8At(sc + 6u));
  return out;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (!begin(gid)) { return; }
  let numBlocks = params.k / 256u;
  let rowBytes = numBlocks * 210u;
  let r0 = rowOf(gid, 0u) * rowBytes; let r1 = rowOf(gid, 1u) * rowBytes;
  let r2 = rowOf(gid, 2u) * rowBytes; let r3 = rowOf(gid, 3u) * rowBytes;
  for (var b = 0u; b < numBlocks; b++) {
    let o0 = r0 + b * 210u; let o1 = r1 + b * 210u; let o2 = r2 + b * 210u; let o3 = r3 + b * 210u;
    for (var h = 0u; h < 2u; h++) {
      for (var l = 0u; l < 32u; l += 4u) {
        let a0 = quarters(o0, h, l); let a1 = quarters(o1, h, l);
        let a2 = quarters(o2, h, l); let a3 = quarters(o3, h, l);
        let xi = b * 64u + h * 32u + l / 4u;
        for (var s = 0u; s < 4u; s++) {
          accumulate(six4(a0.q[s], a0.ds[s]), six4(a1.q[s], a1.ds[s]),
                     six4(a2.q[s], a2.ds[s]), six4(a3.q[s], a3.ds[s]), xi + 8u * s);
        }
      }
    }
  }
  store(gid.y * TILE, gid.x * ROWS);
}
