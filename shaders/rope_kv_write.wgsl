// RoPE on Q (in place) and on K, then rotated K and V into one layer's paged cache, in one pass.
// Not an allocator (block ids come from the engine; block 0 is never written) nor a frequency source.
// Twin: reference rope (on q, on k) then kvWrite. slot = blockTables[row's offset + pos / blockSize]
// * blockSize + pos % blockSize. cos/sin come from tables the host builds in f64 (GPU sin/cos of
// angles in the thousands lose too many bits), two-level, angle(pos) = angle(hi * L) + angle(lo)
// with pos = hi * L + lo, combined by the angle-sum identity. HF's rotate-half layout: element i
// pairs with i + headDim/2.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  numTokens: u32,
  numHeads: u32,
  numKvHeads: u32,
  headDim: u32,
  tableLevel: u32,  // L
  blockSize: u32,
  kvDim: u32,       // numKvHeads * headDim
  vOffset: u32,     // floats from the layer's K cache to its V cache (numBlocks * blockSize * kvDim)
}

// One token of the step, as step-meta packs it (embedding reads the same layout).
struct TokenInfo {
  id: u32,
  pos: u32,               // where the rotation angle and the cache slot come from
  row: u32,
  blockTableOffset: u32,  // its row's block table in blockTables
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<TokenInfo>;   // [numTokens]
// [2, L, headDim / 2] (cos, sin): level 0 at angle lo * invFreq[i], level 1 at angle hi * L * invFreq[i]
@group(0) @binding(2) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;    // rows' block tables, concatenated
@group(0) @binding(4) var<storage, read_write> q: array<f32>;        // [numTokens, numHeads, headDim]
@group(0) @binding(5) var<storage, read> k: array<f32>;              // [numTokens, kvDim], left unrotated
@group(0) @binding(6) var<storage, read> v: array<f32>;              // [numTokens, kvDim]
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape.
@group(0) @binding(7) var<storage, read_write> kv: array<f32>;

// Invocation x: one rotation pair (head, i) of Q's numHeads heads, then of K's numKvHeads heads
// (a K pair also carries V's two elements). y: the token.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = params.headDim / 2u;
  let t = gid.y;
  if (gid.x >= (params.numHeads + params.numKvHeads) * half || t >= params.numTokens) { return; }
  let h = gid.x / half;
  let i = gid.x % half;
  let token = tokens[t];
  let level = params.tableLevel;
  let low = table[(token.pos % level) * half + i];
  let high = table[(level + token.pos / level) * half + i];
  let c = high.x * low.x - high.y * low.y;
  let s = high.y * low.x + high.x * low.y;
  if (h < params.numHeads) {
    let base = (t * params.numHeads + h) * params.headDim;
    let a = q[base + i];
    let b = q[base + i + half];
    q[base + i] = a * c - b * s;
    q[base + i + half] = b * c + a * s;
    return;
  }
  let headBase = (h - params.numHeads) * params.headDim;
  let src = t * params.kvDim + headBase;
  let bs = params.blockSize;
  let dst = (blockTables[token.blockTableOffset + token.pos / bs] * bs + token.pos % bs) * params.kvDim + headBase;
  let a = k[src + i];
  let b = k[src + i + half];
  kv[dst + i] = a * c - b * s;
  kv[dst + i + half] = b * c + a * s;
  kv[params.vOffset + dst + i] = v[src + i];
  kv[params.vOffset + dst + i + half] = v[src + i + half];
}
