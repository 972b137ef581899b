// Paged causal attention for decode rows and prefill chunks in one launch: one workgroup per
// (head, token); token t at position p attends to positions 0..p of its own row, found through
// its row's block table (GQA: kv head = head / (numHeads / numKvHeads)). Twin: pagedAttention.
// Not a KV writer: the step's own K/V must already be in the cache (kv_write) so chunks see themselves.
// Positions are visited in tiles of WORKGROUP_SIZE with an online softmax; every sum runs in a
// fixed order that depends only on the token's own position, so results are batch invariant.

override WORKGROUP_SIZE: u32 = 64u;
const MAX_HEAD_DIM: u32 = 256u;
const DIMS_PER_THREAD: u32 = 4u;  // headDim <= DIMS_PER_THREAD * WORKGROUP_SIZE (256 at the default 64)
const MASKED: f32 = -3.0e38;

struct Params {
  numTokens: u32,
  numHeads: u32,
  numKvHeads: u32,
  headDim: u32,
  blockSize: u32,
  kvDim: u32,     // numKvHeads * headDim
  vOffset: u32,   // floats from the layer's K cache to its V cache
  scale: f32,     // 1 / sqrt(headDim)
}

struct TokenInfo {
  id: u32,
  pos: u32,
  row: u32,
  blockTableOffset: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<TokenInfo>;   // [numTokens]
@group(0) @binding(2) var<storage, read> blockTables: array<u32>;    // rows' block tables, concatenated
@group(0) @binding(3) var<storage, read> q: array<f32>;              // [numTokens, numHeads, headDim]
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape.
@group(0) @binding(4) var<storage, read> kv: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;      // [numTokens, numHeads, headDim]

var<workgroup> qShared: array<f32, MAX_HEAD_DIM>;
var<workgroup> probs: array<f32, WORKGROUP_SIZE>;   // scores, then exp(score - max) of one tile
var<workgroup> slots: array<u32, WORKGROUP_SIZE>;   // cache slot of each position of the tile

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = wid.x;
  let t = wid.y;
  if (t >= params.numTokens) { return; }
  let token = tokens[t];
  let numPos = token.pos + 1u;
  let headDim = params.headDim;
  let bs = params.blockSize;
  let kvHeadBase = (h / (params.numHeads / params.numKvHeads)) * headDim;
  let qBase = (t * params.numHeads + h) * headDim;
  let numOwned = (headDim + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;  // dims per thread, <= DIMS_PER_THREAD
  for (var d = lid; d < headDim; d += WORKGROUP_SIZE) { qShared[d] = q[qBase + d]; }
  workgroupBarrier();

  var runningMax = MASKED;
  var runningSum = 0.0;
  var acc: array<f32, DIMS_PER_THREAD>;
  for (var tile = 0u; tile < numPos; tile += WORKGROUP_SIZE) {
    let count = min(WORKGROUP_SIZE, numPos - tile);
    // 1. this thread's position: score and slot
    var score = MASKED;
    if (lid < count) {
      let j = tile + lid;
      let slot = blockTables[token.blockTableOffset + j / bs] * bs + j % bs;
      let kBase = slot * params.kvDim + kvHeadBase;
      var dotQK = 0.0;
      for (var d = 0u; d < headDim; d++) { dotQK += qShared[d] * kv[kBase + d]; }
      score = dotQK * params.scale;
      slots[lid] = slot;
    }
    probs[lid] = score;
    workgroupBarrier();
    // 2. every thread finds the same tile max in the same order
    var tileMax = probs[0];
    for (var j = 1u; j < count; j++) { tileMax = max(tileMax, probs[j]); }
    let newMax = max(runningMax, tileMax);
    workgroupBarrier();
    if (lid < count) { probs[lid] = exp(score - newMax); }
    workgroupBarrier();
    // 3. rescale and add the tile's weighted V rows; this thread owns dims lid + i * WORKGROUP_SIZE
    let alpha = exp(runningMax - newMax);
    runningSum *= alpha;
    for (var i = 0u; i < numOwned; i++) { acc[i] *= alpha; }
    for (var j = 0u; j < count; j++) {
      let p = probs[j];
      runningSum += p;
      let vBase = params.vOffset + slots[j] * params.kvDim + kvHeadBase;
      for (var i = 0u; i < numOwned; i++) {
        let d = lid + i * WORKGROUP_SIZE;
        if (d < headDim) { acc[i] += p * kv[vBase + d]; }
      }
    }
    runningMax = newMax;
    workgroupBarrier();
  }
  for (var i = 0u; i < numOwned; i++) {
    let d = lid + i * WORKGROUP_SIZE;
    if (d < headDim) { out[qBase + d] = acc[i] / runningSum; }
  }
}
