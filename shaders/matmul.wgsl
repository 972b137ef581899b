// Matmul with the weights' stored dtype decoded in registers: y[t, n] = sum_k x[t, k] * w[n, k]
// (+ bias[n]) (+ y[t, n] if ACCUMULATE). Not a large-batch GEMM. Twin: reference matmulQuant.
// Two stores save whole dispatches (the step's cost on small models is mostly per dispatch):
// - rows split into up to three outputs: rows [0, splitA) to y, [splitA, splitB) to y2 and
//   [splitB, n) to y3, each [numTokens, its rows] (q, k and v from one fused weight matrix);
// - GLU: rows interleaved (gate_i, up_i), and y[t, i] = act(gate_i) * up_i, y [numTokens, n / 2]
//   (gate_proj, up_proj and SwiGLU or GeGLU as one dispatch; twin: matmulQuant then swiglu/geglu).
// With Params.softcap > 0 every stored value is softcap * tanh(value / softcap) (gemma2's final
// logits: lm_head's store, so sampling and the logits read back both see the capped values).
// With NORM_INPUT, x is the residual stream and the kernel multiplies by RMSNorm(x) instead: each
// workgroup computes its tokens' 1 / rms in rms_norm.wgsl's order, so the product sees bitwise
// what rms_norm would have written (twin: rmsNorm then matmulQuant), one dispatch fewer.
//
// Why this shape: a workgroup holds WORKGROUP_SIZE / LANES row groups of ROWS weight rows, and
// the LANES invocations of a row group split K between them, unit by unit (a unit is 4 weights of
// f32/f16/bf16, a q8_0/q4_0 block, a q4_K group of 64, a quarter-row of 16 of a q6_K half block):
// adjacent lanes read adjacent units of one row, so on a GPU a warp's loads cover contiguous bytes,
// and a Llama-3.2-1B projection launches hundreds of workgroups at batch 1. Each weight is still
// read once per TILE tokens (once per step for decode cohorts of up to TILE rows). The lanes'
// partial sums meet in a workgroup-memory tree whose order LANES alone fixes. LANES = 1 is the
// shape CPU adapters run fastest (one invocation walks all of K; no barriers), kernels.ts
// MATMUL_SHAPE holds each setting's values.
// Batch invariance: every output element sums its units in one fixed order (each lane's units in
// ascending order, then the tree) whatever the token count, so a token's outputs never depend on
// the other tokens of the step; one pipeline serves every token count.

override WORKGROUP_SIZE: u32 = 64u;
// Invocations along K per row group: a power of two dividing WORKGROUP_SIZE.
override LANES: u32 = 1u;
// true: the token loops run to TILE with each iteration guarded, so indices into the tile are
// constants and GPU compilers keep its accumulators in registers. false: they run to the tile's
// own count: SwiftShader walked all TILE masked iterations, which made a one-token decode step
// cost most of a full tile (B=1 steps ~1.6x faster this way; full tiles the same within noise).
override GUARDED_TILE: bool = false;
// Stored dtype of w (codes shared with embedding.wgsl): 0 f32, 1 f16, 2 bf16, 3 q8_0, 4 q4_0,
// 5 q4_K, 6 q6_K. Picks the weight loop once per invocation; the compiler folds the rest away.
override DTYPE: u32 = 0u;
// x is normalized on the fly: x[t, i] * invRms[t] * normWeight[i] (see the top).
override NORM_INPUT: bool = false;
// Adds a bias vector after the sum (qwen2's q/k/v projections).
override HAS_BIAS: bool = false;
// Adds the result into y instead of overwriting it: the residual add fused into o_proj/down_proj.
override ACCUMULATE: bool = false;
// Interleaved gate/up rows, stored as act(gate) * up (see the top).
override GLU: bool = false;
// GLU's gate activation (kernels.ts ACTIVATION_CODE): 0 silu (SwiGLU), 1 tanh-approximated GELU (GeGLU).
override ACTIVATION: u32 = 0u;
const ACT_GELU_TANH: u32 = 1u;
const GELU_C: f32 = 0.7978845608028654;  // sqrt(2 / pi)
// tanh's argument is clamped to +-15: f32 tanh is +-1 before 9, so no result changes, while
// SwiftShader's tanh returns NaN for large arguments (measured: gelu's at a gate of 20, ~300)
const TANH_CLAMP: f32 = 15.0;

// const, not override: TILE sizes a private array and ROWS is the 4 lanes of every accumulator,
// which WGSL only allows for const-expressions. The host's copies are checked against these.
const ROWS: u32 = 4u;  // weight rows per row group
const TILE: u32 = 8u;  // tokens per workgroup (grid y covers numTokens / TILE)

struct Params {
  numTokens: u32,
  n: u32,       // weight rows = outputs per token
  k: u32,       // weight cols = inputs per token
  splitA: u32,  // first row stored to y2 (n: none)
  splitB: u32,  // first row stored to y3 (n: none)
  softcap: f32, // > 0: stores softcap * tanh(value / softcap) (not with GLU); 0: the values as they are
  eps: f32,     // NORM_INPUT's epsilon
  pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;       // [numTokens, k / 4]
@group(0) @binding(2) var<storage, read> w: array<u32>;             // [n, stored bytes of k]: ggml's layout; q8_0/q4_0 repacked (see below)
@group(0) @binding(3) var<storage, read> bias: array<f32>;          // [n] (HAS_BIAS)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;       // [numTokens, splitA] (GLU: [numTokens, n / 2])
@group(0) @binding(5) var<storage, read_write> y2: array<f32>;      // [numTokens, splitB - splitA]
@group(0) @binding(6) var<storage, read_write> y3: array<f32>;      // [numTokens, n - splitB]
@group(0) @binding(7) var<storage, read> normWeight: array<vec4<f32>>; // [k / 4] (NORM_INPUT)

// [WORKGROUP_SIZE, TILE] the lanes' partial sums, invocation-major, so a row group's lanes are
// adjacent (LANES > 1 only)
var<workgroup> partials: array<vec4<f32>, WORKGROUP_SIZE * TILE>;

// acc[t][r]: token t0 + t against weight row row0 + r, this lane's units only.
var<private> acc: array<vec4<f32>, TILE>;
var<private> numT: u32;   // tokens of this workgroup's tile (1..TILE); 0 for a row group past n
var<private> xBase: u32;  // first x vec4 of token t0
var<private> xStride: u32;  // vec4s per token (k / 4)
var<private> invRms: array<f32, TILE>;  // NORM_INPUT: 1 / rms of token t0 + t

// x's 4 elements i of token t0 + t, normalized as rms_norm.wgsl writes them under NORM_INPUT.
fn xAt(t: u32, i: u32) -> vec4<f32> {
  let xv = x[xBase + t * xStride + i];
  if (NORM_INPUT) { return normWeight[i] * (xv * invRms[t]); }
  return xv;
}

// One 4-element step of k for all 4 rows and every token of the tile, always in this order.
fn accumulate(w0: vec4<f32>, w1: vec4<f32>, w2: vec4<f32>, w3: vec4<f32>, i: u32) {
  if (GUARDED_TILE) {
    for (var t = 0u; t < TILE; t++) {
      if (t < numT) {
        let xv = xAt(t, i);
        acc[t] += vec4<f32>(dot(w0, xv), dot(w1, xv), dot(w2, xv), dot(w3, xv));
      }
    }
    return;
  }
  for (var t = 0u; t < numT; t++) {
    let xv = xAt(t, i);
    acc[t] += vec4<f32>(dot(w0, xv), dot(w1, xv), dot(w2, xv), dot(w3, xv));
  }
}

// 1 / rms of the tile's tokens, by the whole workgroup in rms_norm.wgsl's order (strided sums of
// squares over WORKGROUP_SIZE invocations, then a tree), so the bits are rms_norm's when both run
// 64 invocations. tokens: the tile's count (0 past the rows: the sums are then unused).
fn normTile(lid: u32, tokens: u32) {
  let k = params.k;
  for (var t = 0u; t < tokens; t++) {
    var sum = 0.0;
    for (var i = lid; i < k; i += WORKGROUP_SIZE) {
      let xv = x[xBase + t * xStride + i / 4u];
      let value = xv[i % 4u];
      sum += value * value;
    }
    partials[lid * TILE + t].x = sum;
  }
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      for (var t = 0u; t < tokens; t++) { partials[lid * TILE + t].x += partials[(lid + stride) * TILE + t].x; }
    }
    workgroupBarrier();
  }
  for (var t = 0u; t < TILE; t++) {
    if (t < tokens) { invRms[t] = 1.0 / sqrt(partials[t].x / f32(k) + params.eps); }
  }
  workgroupBarrier();  // partials are the lanes' again
}

/** The GLU's gate activation, as the twins swiglu and geglu (geluTanh) compute it. */
fn activate(g: f32) -> f32 {
  if (ACTIVATION == ACT_GELU_TANH) {
    return 0.5 * g * (1.0 + tanh(clamp(GELU_C * (g + 0.044715 * g * g * g), -TANH_CLAMP, TANH_CLAMP)));
  }
  return g / (1.0 + exp(-g));
}

// Sums each output over the row group's lanes: lane j adds lane j + stride's partials for strides
// LANES / 2 .. 1, so every output's order is fixed by LANES. Leaves the totals at the group's first
// invocation. Called by the whole workgroup (barriers).
fn reduceLanes(lid: u32, lane: u32) {
  let at = lid * TILE;
  for (var t = 0u; t < TILE; t++) { partials[at + t] = acc[t]; }
  workgroupBarrier();
  for (var stride = LANES / 2u; stride > 0u; stride /= 2u) {
    if (lane < stride) {
      for (var t = 0u; t < numT; t++) { partials[at + t] += partials[at + stride * TILE + t]; }
    }
    workgroupBarrier();
  }
}

// Output (token t0 + t, row row0 + r) summed over every unit: the group's first invocation's
// partials after reduceLanes (at = its index * TILE), or this invocation's own with one lane.
fn total(at: u32, t: u32, r: u32) -> f32 {
  if (LANES == 1u) { return acc[t][r]; }
  return partials[at + t][r];
}

// The tile's outputs, spread over the row group's lanes (one lane stores them all when LANES = 1).
fn store(t0: u32, row0: u32, lane: u32, at: u32) {
  let splitA = params.splitA;
  let splitB = params.splitB;
  for (var o = lane; o < numT * ROWS; o += LANES) {
    let t = o / ROWS;
    let r = o % ROWS;
    let n = row0 + r;
    let token = t0 + t;
    if (GLU) {
      // rows (gate_i, up_i) pairs; row0 is even, so pairs never straddle row groups
      if (r % 2u == 0u && n + 1u < params.n) {
        y[token * (params.n / 2u) + n / 2u] = activate(total(at, t, r)) * total(at, t, r + 1u);
      }
      continue;
    }
    if (n < params.n) {
      var value = total(at, t, r);
      if (HAS_BIAS) { value += bias[n]; }
      if (params.softcap > 0.0) { value = params.softcap * tanh(clamp(value / params.softcap, -TANH_CLAMP, TANH_CLAMP)); }
      if (n < splitA) {
        let i = token * splitA + n;
        if (ACCUMULATE) { value = y[i] + value; }
        y[i] = value;
      } else if (n < splitB) {
        y2[token * (splitB - splitA) + n - splitA] = value;
      } else {
        y3[token * (params.n - splitB) + n - splitB] = value;
      }
    }
  }
}

// Where the row group's 4 weight rows start, in units of `stride` (a row's words or bytes).
// Rows past n read the last row; their results are never stored.
fn rowStarts(row0: u32, stride: u32) -> vec4<u32> {
  return min(vec4<u32>(row0) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(params.n - 1u)) * stride;
}

// --- Stored bytes as u32 words. Blocks of 34, 18 and 210 bytes leave rows and blocks 2-byte
// aligned only, so reads go through these helpers (o is a byte offset; even where noted).

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

// --- f32, f16, bf16: 4 weights per k step, read straight from their words.

fn rowsPlain(row0: u32, lane: u32, units: u32) {
  let words = select(2u, 4u, DTYPE == 0u);  // u32 words per 4 weights
  let rows = rowStarts(row0, (params.k / 4u) * words);
  for (var i = lane; i < units; i += LANES) {
    let at = rows + i * words;
    accumulate(plain4(at.x), plain4(at.y), plain4(at.z), plain4(at.w), i);
  }
}

// 4 weights from word j: f32 as is; halves two per u32, low half first. f16 needs no
// shader-f16; bf16 -> f32 is a 16-bit shift.
fn plain4(j: u32) -> vec4<f32> {
  if (DTYPE == 0u) { return bitcast<vec4<f32>>(vec4<u32>(w[j], w[j + 1u], w[j + 2u], w[j + 3u])); }
  let p = vec2<u32>(w[j], w[j + 1u]);
  if (DTYPE == 1u) { return vec4<f32>(unpack2x16float(p.x), unpack2x16float(p.y)); }
  return bitcast<vec4<f32>>(vec4<u32>(p.x << 16u, p.x & 0xffff0000u, p.y << 16u, p.y & 0xffff0000u));
}

// --- q8_0 and q4_0: ggml blocks of 32 weights with an f16 scale d. q8_0: int8 q[32], weight
// d * q. q4_0: u8 q[16], low nibbles = elements 0..15, high nibbles = 16..31, weight
// d * (nibble - 8). Repacked at upload (src/gpu/repack.ts): every block's quants in row-major
// block order (8 or 4 aligned words), then every block's d in the same order, so no read straddles
// a word (ggml's 34- and 18-byte blocks are only 2-byte aligned).

fn int8x4(q: u32) -> vec4<f32> {
  let s = vec4<i32>(bitcast<i32>(q << 24u), bitcast<i32>(q << 16u), bitcast<i32>(q << 8u), bitcast<i32>(q));
  return vec4<f32>(s >> vec4<u32>(24u));
}

fn q4Low(q: u32, d: f32) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(bytes4(q) & vec4<u32>(0xfu)) - vec4<i32>(8)) * d;
}

fn q4High(q: u32, d: f32) -> vec4<f32> {
  return vec4<f32>(vec4<i32>(bytes4(q) >> vec4<u32>(4u)) - vec4<i32>(8)) * d;
}

fn rowsBlocks32(row0: u32, lane: u32, units: u32) {
  let words = select(4u, 8u, DTYPE == 3u);  // quant words per block
  let blocksPerRow = params.k / 32u;
  let quants = rowStarts(row0, blocksPerRow * words);  // in words
  let scales = params.n * blocksPerRow * words * 4u + rowStarts(row0, blocksPerRow * 2u);  // in bytes
  for (var b = lane; b < units; b += LANES) {
    let o = quants + b * words;
    let s = scales + b * 2u;
    let d = vec4<f32>(halfAt(s.x), halfAt(s.y), halfAt(s.z), halfAt(s.w));
    if (DTYPE == 3u) {
      for (var j = 0u; j < 8u; j++) {
        let q = o + j;
        accumulate(int8x4(w[q.x]) * d.x, int8x4(w[q.y]) * d.y, int8x4(w[q.z]) * d.z, int8x4(w[q.w]) * d.w, b * 8u + j);
      }
    } else {
      for (var g = 0u; g < 4u; g++) {
        let at = o + g;
        let q = vec4<u32>(w[at.x], w[at.y], w[at.z], w[at.w]);
        accumulate(q4Low(q.x, d.x), q4Low(q.y, d.y), q4Low(q.z, d.z), q4Low(q.w, d.w), b * 8u + g);
        accumulate(q4High(q.x, d.x), q4High(q.y, d.y), q4High(q.z, d.z), q4High(q.w, d.w), b * 8u + 4u + g);
      }
    }
  }
}

// --- q4_K (ggml super-block of 256: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins,
// u8 q[128]; 144 bytes = 36 words, so word-aligned): d*sc*q - dmin*m.

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

fn q4kLow(q: u32, s: vec4<f32>) -> vec4<f32> {
  return s.x * vec4<f32>(bytes4(q) & vec4<u32>(0xfu)) - s.y;
}

fn q4kHigh(q: u32, s: vec4<f32>) -> vec4<f32> {
  return s.z * vec4<f32>(bytes4(q) >> vec4<u32>(4u)) - s.w;
}

// A unit is one group of 64 elements (4 per block): 32 low nibbles (scale 2g) then the same
// bytes' high nibbles (2g + 1).
fn rowsQ4K(row0: u32, lane: u32, units: u32) {
  let rows = rowStarts(row0, (params.k / 256u) * 36u);  // in words
  for (var u = lane; u < units; u += LANES) {
    let b = u / 4u;
    let g = u % 4u;
    let o = rows + b * 36u;
    let s0 = groupScales(o.x, 2u * g); let s1 = groupScales(o.y, 2u * g);
    let s2 = groupScales(o.z, 2u * g); let s3 = groupScales(o.w, 2u * g);
    let xi = u * 16u;
    for (var l = 0u; l < 8u; l++) {
      let at = o + 4u + 8u * g + l;
      let q = vec4<u32>(w[at.x], w[at.y], w[at.z], w[at.w]);
      accumulate(q4kLow(q.x, s0), q4kLow(q.y, s1), q4kLow(q.z, s2), q4kLow(q.w, s3), xi + l);
      accumulate(q4kHigh(q.x, s0), q4kHigh(q.y, s1), q4kHigh(q.z, s2), q4kHigh(q.w, s3), xi + 8u + l);
    }
  }
}

// --- q6_K (ggml super-block of 256: u8 ql[128] low 4 bits, u8 qh[64] high 2 bits, int8
// scales[16], f16 d; 210 bytes): d*sc*(q - 32).

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

// A unit is 16 elements: the 4 quarters of one (half h, 4 bytes from l) of a block, 16 per block.
fn rowsQ6K(row0: u32, lane: u32, units: u32) {
  let rows = rowStarts(row0, (params.k / 256u) * 210u);
  for (var u = lane; u < units; u += LANES) {
    let o = rows + (u / 16u) * 210u;
    let h = (u / 8u) % 2u;
    let l = (u % 8u) * 4u;
    let a0 = quarters(o.x, h, l); let a1 = quarters(o.y, h, l);
    let a2 = quarters(o.z, h, l); let a3 = quarters(o.w, h, l);
    let xi = (u / 8u) * 32u + l / 4u;
    for (var s = 0u; s < 4u; s++) {
      accumulate(six4(a0.q[s], a0.ds[s]), six4(a1.q[s], a1.ds[s]),
                 six4(a2.q[s], a2.ds[s]), six4(a3.q[s], a3.ds[s]), xi + 8u * s);
    }
  }
}

// Units of one row: 4 weights (f32, f16, bf16), a 32-weight block (q8_0, q4_0), a q4_K group of
// 64, a q6_K quarter-row of 16.
fn unitsPerRow() -> u32 {
  switch DTYPE {
    case 0u, 1u, 2u: { return params.k / 4u; }
    case 3u, 4u: { return params.k / 32u; }
    case 5u: { return params.k / 64u; }
    default: { return params.k / 16u; }
  }
}

// Grid: x (and, past 65535 workgroups, y's upper part) over row groups, y over token tiles.
// No invocation returns early: the lanes meet at barriers, so a row group past n runs no units.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let tiles = max(1u, (params.numTokens + TILE - 1u) / TILE);
  let t0 = (wg.y % tiles) * TILE;
  let lane = lid % LANES;
  let row0 = ((wg.x + groups.x * (wg.y / tiles)) * (WORKGROUP_SIZE / LANES) + lid / LANES) * ROWS;
  let live = row0 < params.n && t0 < params.numTokens;
  numT = select(0u, min(TILE, params.numTokens - t0), live);
  xStride = params.k / 4u;
  xBase = t0 * xStride;
  // the tile's tokens, whatever the row group: every row group of the workgroup shares them
  if (NORM_INPUT) { normTile(lid, min(TILE, params.numTokens - t0)); }
  let units = select(0u, unitsPerRow(), live);
  switch DTYPE {
    case 0u, 1u, 2u: { rowsPlain(row0, lane, units); }
    case 3u, 4u: { rowsBlocks32(row0, lane, units); }
    case 5u: { rowsQ4K(row0, lane, units); }
    default: { rowsQ6K(row0, lane, units); }
  }
  if (LANES > 1u) { reduceLanes(lid, lane); }
  store(t0, row0, lane, (lid - lane) * TILE);
}
