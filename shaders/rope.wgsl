// RoPE in HF's rotate-half layout, in place on [numTokens, numHeads, headDim]: element i pairs
// with i + headDim/2, angle = pos * invFreq[i], each token at its own position. Twin: reference rope.
// Not where frequencies are computed: cos/sin come from tables the host builds in f64 from theta
// and the Llama-3 scaling, because GPU sin/cos of angles in the thousands lose too many bits.
// Tables are two-level, angle(pos) = angle(hi * L) + angle(lo) with pos = hi * L + lo, so they
// hold 2 * L * headDim/2 entries for positions up to L * L, combined by the angle-sum identity.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  numTokens: u32,
  numHeads: u32,
  headDim: u32,
  tableLevel: u32,  // L
}

struct TokenInfo {
  id: u32,
  pos: u32,
  row: u32,
  blockTableOffset: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<TokenInfo>;   // [numTokens]
// [2, L, headDim / 2] (cos, sin): level 0 at angle lo * invFreq[i], level 1 at angle hi * L * invFreq[i]
@group(0) @binding(2) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;        // [numTokens, numHeads, headDim]

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = params.headDim / 2u;
  let t = gid.y;
  if (gid.x >= params.numHeads * half || t >= params.numTokens) { return; }
  let h = gid.x / half;
  let i = gid.x % half;
  let level = params.tableLevel;
  let pos = tokens[t].pos;
  let low = table[(pos % level) * half + i];
  let high = table[(level + pos / level) * half + i];
  let c = high.x * low.x - high.y * low.y;
  let s = high.y * low.x + high.x * low.y;
  let base = (t * params.numHeads + h) * params.headDim;
  let a = x[base + i];
  let b = x[base + i + half];
  x[base + i] = a * c - b * s;
  x[base + i + half] = b * c + a * s;
}
