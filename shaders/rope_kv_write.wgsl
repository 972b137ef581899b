// RoPE on Q (in place) and on K, then rotated K and V into one layer's paged cache in its storage
// type, in one pass. Not an allocator (block ids come from the engine; block 0 is never written)
// nor a frequency source.
// Twin: reference rope (on q, on k) then kvWrite. slot = blockTables[row's offset + pos / blockSize]
// * blockSize + pos % blockSize. cos/sin come from tables the host builds in f64 (GPU sin/cos of
// angles in the thousands lose too many bits), two-level, angle(pos) = angle(hi * L) + angle(lo)
// with pos = hi * L + lo, combined by the angle-sum identity. HF's rotate-half layout: element i
// pairs with i + headDim/2.
// The cache's storage type is the KV_TYPE override (kernels.ts KV_TYPE_CODE), and the rounding to
// it happens here, once: f32 as is; f16 two values per u32 (pack2x16float); q8_0 llama.cpp's
// block (ggml's quantize_row_q8_0_ref: d = amax / 127, q = roundf(x * (1 / d)), d kept as f16),
// quants four per u32 and scales in their own region (src/gpu/kv-arena.ts kvLayerLayout). An
// invocation owns whole words: one value (f32), a pair (f16) or a 32-value block (q8_0, which
// needs the block's amax), so no two invocations write the same word. WGSL leaves the last ulp of
// a division and the f32 -> f16 rounding to the implementation: SwiftShader matches the twin bit
// for bit (rope-kv-write.test.ts); another GPU may land a value one f16 ulp or one q8_0 step away,
// deterministically, so batch and chunk invariance hold there too.

override WORKGROUP_SIZE: u32 = 64u;
override KV_TYPE: u32 = 0u;  // 0 f32, 1 f16, 3 q8_0 (the DTYPE codes of matmul.wgsl)
const KV_F16: u32 = 1u;
const KV_Q8_0: u32 = 3u;
const Q8_BLOCK: u32 = 32u;

struct Params {
  numTokens: u32,
  numHeads: u32,
  numKvHeads: u32,
  headDim: u32,
  tableLevel: u32,  // L
  blockSize: u32,
  kvDim: u32,       // numKvHeads * headDim
  vOffset: u32,     // words from the layer's K cache to its V cache (q8_0: its scales at 2 * vOffset)
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
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape, in KV_TYPE's words.
@group(0) @binding(7) var<storage, read_write> kv: array<u32>;

/** (cos, sin) of the angle of position pos at frequency i, from the two-level table. */
fn angleAt(pos: u32, i: u32) -> vec2<f32> {
  let half = params.headDim / 2u;
  let level = params.tableLevel;
  let low = table[(pos % level) * half + i];
  let high = table[(level + pos / level) * half + i];
  return vec2<f32>(high.x * low.x - high.y * low.y, high.y * low.x + high.x * low.y);
}

/** Element e (of kvDim) of token t's K, rotated: the same two products as Q's pair. */
fn rotatedK(t: u32, pos: u32, e: u32) -> f32 {
  let half = params.headDim / 2u;
  let d = e % params.headDim;
  let i = d % half;
  let cs = angleAt(pos, i);
  let src = t * params.kvDim + e - d + i;
  let a = k[src];
  let b = k[src + half];
  if (d < half) { return a * cs.x - b * cs.y; }
  return b * cs.x + a * cs.y;
}

/** C's roundf (half away from zero), as ggml's quantizer; WGSL's round() is half to even. */
fn roundHalfAway(x: f32) -> f32 {
  let t = trunc(x);
  return select(t, t + sign(x), abs(x - t) >= 0.5);
}

/** A q8_0 block's quants, four per word, from its values times id (1 / d, or 0). */
fn quantWord(x: ptr<function, array<f32, Q8_BLOCK>>, first: u32, id: f32) -> u32 {
  var word = 0u;
  for (var j = 0u; j < 4u; j++) {
    let qv = i32(roundHalfAway((*x)[first + j] * id));
    word |= (bitcast<u32>(qv) & 0xffu) << (8u * j);
  }
  return word;
}

// Invocation x: one rotation pair (head, i) of Q's numHeads heads, then one unit of K and V's
// kvDim values (`unit` values: what fills whole words of the cache). y: the token.
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let half = params.headDim / 2u;
  let t = gid.y;
  let numPairs = params.numHeads * half;
  let unit = select(select(1u, 2u, KV_TYPE == KV_F16), Q8_BLOCK, KV_TYPE == KV_Q8_0);  // K/V values one invocation writes
  if (gid.x >= numPairs + params.kvDim / unit || t >= params.numTokens) { return; }
  let token = tokens[t];
  if (gid.x < numPairs) {
    let h = gid.x / half;
    let i = gid.x % half;
    let cs = angleAt(token.pos, i);
    let base = (t * params.numHeads + h) * params.headDim;
    let a = q[base + i];
    let b = q[base + i + half];
    q[base + i] = a * cs.x - b * cs.y;
    q[base + i + half] = b * cs.x + a * cs.y;
    return;
  }
  let e0 = (gid.x - numPairs) * unit;  // the unit's first value within the slot
  let bs = params.blockSize;
  let slot = blockTables[token.blockTableOffset + token.pos / bs] * bs + token.pos % bs;
  let dst = slot * params.kvDim + e0;  // value index of the unit in the K (or V) region
  let src = t * params.kvDim + e0;
  if (KV_TYPE == KV_Q8_0) {
    var kx: array<f32, Q8_BLOCK>;
    var vx: array<f32, Q8_BLOCK>;
    var kMax = 0.0;
    var vMax = 0.0;
    for (var j = 0u; j < Q8_BLOCK; j++) {
      kx[j] = rotatedK(t, token.pos, e0 + j);
      vx[j] = v[src + j];
      kMax = max(kMax, abs(kx[j]));
      vMax = max(vMax, abs(vx[j]));
    }
    let kd = kMax / 127.0;
    let vd = vMax / 127.0;
    let kid = select(0.0, 1.0 / kd, kd != 0.0);
    let vid = select(0.0, 1.0 / vd, vd != 0.0);
    for (var w = 0u; w < Q8_BLOCK / 4u; w++) {
      kv[dst / 4u + w] = quantWord(&kx, 4u * w, kid);
      kv[params.vOffset + dst / 4u + w] = quantWord(&vx, 4u * w, vid);
    }
    kv[2u * params.vOffset + dst / Q8_BLOCK] = pack2x16float(vec2<f32>(kd, vd));
  } else if (KV_TYPE == KV_F16) {
    let kw = vec2<f32>(rotatedK(t, token.pos, e0), rotatedK(t, token.pos, e0 + 1u));
    kv[dst / 2u] = pack2x16float(kw);
    kv[params.vOffset + dst / 2u] = pack2x16float(vec2<f32>(v[src], v[src + 1u]));
  } else {
    kv[dst] = bitcast<u32>(rotatedK(t, token.pos, e0));
    kv[params.vOffset + dst] = bitcast<u32>(v[src]);
  }
}
