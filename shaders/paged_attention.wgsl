// Paged causal attention for decode rows and prefill chunks in one launch, one workgroup per
// (work item, head quad). Not a KV writer: the step's own K/V are already in the cache
// (rope_kv_write), so chunks see themselves. Twin: pagedAttention. Query at position p of row r
// attends to keys windowStart(p)..p (0..p, or p - window + 1..p on a sliding-window layer, whose
// earlier keys are never read: their blocks may be freed) through the row's block table (GQA: kv
// head = head / (numHeads / numKvHeads)); scores q . k * scale, gemma2's soft-capped.
// An invocation carries four lanes, (query, head) pairs of one kv head (a head quad of 1, 2 or 4
// heads) in vec4s, so each K/V element loaded serves four lanes. Work items (step-meta):
// - prefill: queriesPerItem consecutive queries, lane L = lid * 4 + i holding query
//   L / headsPerQuad and head L % headsPerQuad; each invocation walks its lanes' keys;
// - decode: the lanes are the quad's heads of one query (a decode row's, or one of a verify row's),
//   its window's splits f, f + 1, ... spread so invocation s takes f + s, f + s + SLOTS, ...; the
//   workgroup merges their (max, sum, acc) in ascending order;
// - decode partition (split-KV): each item computes one round of splits into `states` (rounds past
//   a windowed row's splits do nothing); `merge` merges a row's splits in ascending order, bitwise
//   the one-workgroup decode item's output.
// A lane's arithmetic is fixed by its own position and window (splits of SPLIT at absolute
// boundaries, online softmax over tiles of TILE keys, ascending merges; keys outside its window
// enter as exact no-ops, splits wholly before it with weight 0), so a row's output is bitwise the
// same whatever rides beside it and however it was chunked.
// KV_TYPE is the cache's storage type (kv-arena.ts kvLayerLayout): each value is read as the f32 it
// decodes to (f16 via unpack2x16float, q8_0 as quant * f16 scale, both exact), so the sums are
// the f32 path's on those values.

const SLOTS: u32 = 16u;  // invocations per workgroup: lane quads of a prefill item, splits of a decode round
const SPLIT: u32 = 32u;  // keys per split
const TILE: u32 = 8u;    // keys per online-softmax update
const CHUNK: u32 = 16u;  // dims of the decode split states merged per pass through workgroup memory
const MAX_HEAD_DIM: u32 = 256u;  // sizes the private arrays (kernels.ts says why they are var<private>)
const MASKED: f32 = -3.0e38;
const TANH_CLAMP: f32 = 15.0;  // f32 tanh is +-1 before 9; SwiftShader's tanh is NaN for large arguments
override KV_TYPE: u32 = 0u;  // 0 f32, 1 f16, 3 q8_0 (the DTYPE codes of matmul.wgsl)
// Scores soft-capped at params.softcap (gemma2): an override, so other models' pipelines carry no branch.
override SOFTCAP: bool = false;
const KV_F16: u32 = 1u;
const KV_Q8_0: u32 = 3u;
const Q8_BLOCK: u32 = 32u;

struct Params {
  numItems: u32,
  numHeads: u32,
  numKvHeads: u32,
  headDim: u32,
  blockSize: u32,
  kvDim: u32,          // numKvHeads * headDim
  vOffset: u32,        // words from the layer's K cache to its V cache (q8_0: its scales at 2 * vOffset)
  scale: f32,          // multiplier of q . k (ModelConfig.attentionScale: 1 / sqrt(headDim) unless gemma)
  headsPerQuad: u32,   // heads of one kv group in an invocation's lanes per query (1, 2 or 4)
  quadsPerKvHead: u32, // ceil((numHeads / numKvHeads) / headsPerQuad): workgroups per item and kv head
  softcap: f32,        // SOFTCAP: scores become softcap * tanh(s / softcap) (gemma2)
  window: u32,         // > 0: the query at p sees keys p - window + 1 .. p only (the layer's); 0: all
}

// One row of the step (step-meta ROW_INFO_WORDS).
struct RowInfo {
  firstToken: u32,        // index in the step of its first token
  numTokens: u32,
  startPos: u32,          // position of its first token
  blockTableOffset: u32,  // its block table in blockTables
}

// One workgroup's share of a row (step-meta ATTENTION_ITEM_WORDS).
struct WorkItem {
  row: u32,
  firstQuery: u32,  // index of its first query among the row's tokens
  numQueries: u32,  // <= queriesPerItem; 1 for decode
  kind: u32,        // ITEM_PREFILL, ITEM_DECODE or ITEM_PARTITION (merge items: ITEM_DECODE)
  firstSplit: u32,  // ITEM_PARTITION: the round's first split, counted from the query's first (its window's)
  stateBase: u32,   // ITEM_PARTITION and merge items: the row's split 0 in `states`
  pad0: u32,
  pad1: u32,
}

const ITEM_PREFILL: u32 = 0u;
const ITEM_DECODE: u32 = 1u;     // all of one query's splits, in rounds within the workgroup
const ITEM_PARTITION: u32 = 2u;  // one round of one query's splits, states to `states`

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> rows: array<RowInfo>;      // [numRows]
@group(0) @binding(2) var<storage, read> items: array<WorkItem>;    // [numItems]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;   // rows' block tables, concatenated
@group(0) @binding(4) var<storage, read> q: array<f32>;             // [numTokens, numHeads, headDim]
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape, in KV_TYPE's words.
@group(0) @binding(5) var<storage, read> kv: array<u32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;     // [numTokens, numHeads, headDim]
// Split states of partitioned decode rows: [split states, quads, 2 + headDim] of lanes, each
// (max, sum, acc[headDim]); a row's split s at stateBase + s, the quad's slice at wid.x.
@group(0) @binding(7) var<storage, read_write> states: array<vec4<f32>>;

// One decode round's split states (max, sum, CHUNK dims of acc at a time) for the four lanes, by split slot.
var<workgroup> splitMax: array<vec4<f32>, SLOTS>;
var<workgroup> splitSum: array<vec4<f32>, SLOTS>;
var<workgroup> splitAcc: array<vec4<f32>, SLOTS * CHUNK>;

// [headDim] of lanes each. Module-scope `var<private>` rather than `var`s in main: both are
// zero-filled per invocation, but at MAX_HEAD_DIM 256 SwiftShader's decode attention took as long
// as function-scope arrays at 128 this way, and 1.1-2.5x as long as function-scope arrays.
var<private> qv: array<vec4<f32>, MAX_HEAD_DIM>;    // the lanes' queries
var<private> acc: array<vec4<f32>, MAX_HEAD_DIM>;   // one split's weighted V sum
var<private> racc: array<vec4<f32>, MAX_HEAD_DIM>;  // the merged splits so far (decode rounds: dims chunk * CHUNK + lid)

/** Values x, x + 1 (x even) of the layer's K region (v = false) or V region, x from its start. */
fn kvPair(x: u32, v: bool) -> vec2<f32> {
  let region = select(0u, params.vOffset, v);
  if (KV_TYPE == KV_Q8_0) {
    let word = bitcast<i32>(kv[region + x / 4u]);
    let at = 8u * (x % 4u);
    return vec2<f32>(f32(extractBits(word, at, 8u)), f32(extractBits(word, at + 8u, 8u))) * q8Scale(x, v);
  } else if (KV_TYPE == KV_F16) {
    return unpack2x16float(kv[region + x / 2u]);
  }
  return vec2<f32>(bitcast<f32>(kv[region + x]), bitcast<f32>(kv[region + x + 1u]));
}

/** q8_0 values x..x + 3 (x % 4 == 0: one word) of the K (v = false) or V region; d: their block's scale. */
fn q8Quad(x: u32, v: bool, d: f32) -> vec4<f32> {
  let w = bitcast<i32>(kv[select(0u, params.vOffset, v) + x / 4u]);  // quant x in the low byte
  return vec4<f32>(f32((w << 24u) >> 24u), f32((w << 16u) >> 24u), f32((w << 8u) >> 24u), f32(w >> 24u)) * d;
}

/** The q8_0 scale of value x's block (K's or V's half of the block's scale word). */
fn q8Scale(x: u32, v: bool) -> f32 {
  return unpack2x16float(kv[2u * params.vOffset + x / Q8_BLOCK])[select(0u, 1u, v)];
}

/** Each tile key's q8_0 scale for its value x (keys[i] + x). */
fn tileScales(keys: array<u32, TILE>, x: u32, v: bool) -> array<f32, TILE> {
  return array<f32, TILE>(q8Scale(keys[0] + x, v), q8Scale(keys[1] + x, v), q8Scale(keys[2] + x, v), q8Scale(keys[3] + x, v),
                          q8Scale(keys[4] + x, v), q8Scale(keys[5] + x, v), q8Scale(keys[6] + x, v), q8Scale(keys[7] + x, v));
}

/** s plus the four dims' q (columns) times key values x, added in dim order (as one at a time). */
fn keyDot(s: vec4<f32>, q: mat4x4<f32>, x: vec4<f32>) -> vec4<f32> {
  return s + q[0] * x.x + q[1] * x.y + q[2] * x.z + q[3] * x.w;
}

// keyDot for two dims
fn keyDot2(s: vec4<f32>, q: mat2x4<f32>, x: vec2<f32>) -> vec4<f32> {
  return s + q[0] * x.x + q[1] * x.y;
}

/** A dim's acc * alpha (a) plus each key's weight (pLo: keys 0..3, pHi: 4..7) times its value, in key order. */
fn weigh(a: vec4<f32>, pLo: mat4x4<f32>, pHi: mat4x4<f32>, lo: vec4<f32>, hi: vec4<f32>) -> vec4<f32> {
  return a + pLo[0] * lo.x + pLo[1] * lo.y + pLo[2] * lo.z + pLo[3] * lo.w + pHi[0] * hi.x + pHi[1] * hi.y + pHi[2] * hi.z + pHi[3] * hi.w;
}

/** The cache slot of key `key` of the row, through its block table. */
fn keySlot(row: RowInfo, key: u32) -> u32 {
  let bs = params.blockSize;
  return blockTables[row.blockTableOffset + key / bs] * bs + key % bs;
}

/** A raw q . k sum as a score: times scale, then soft-capped where the model caps (gemma2). */
fn score(dotSum: vec4<f32>) -> vec4<f32> {
  let s = dotSum * params.scale;
  if (SOFTCAP) { return params.softcap * tanh(clamp(s / params.softcap, vec4<f32>(-TANH_CLAMP), vec4<f32>(TANH_CLAMP))); }
  return s;
}

/**
 * Online softmax of the four lanes over keys [split * SPLIT, min(walkKeys, (split + 1) * SPLIT)),
 * lane i seeing only keys in [lanes.first[i], lanes.keys[i]), from a fresh state: returns (max,
 * sum) per lane and leaves the unnormalized sums of weighted V rows in acc. Tiles before walkFirst
 * (exact no-ops for every lane) are skipped. A tile's TILE keys are held in named registers
 * (k0..k7, s0..s7, p0..p7): each query element and accumulator is read once per tile, not per key.
 * Keys outside [walkFirst, walkKeys) read the nearest walked key's slot (a written, finite row of
 * this row) with weight 0: no key before every lane's window is read. q8_0 dims go four a pass if
 * headDim % 4 == 0 (one word; the block's scales load once a run), else two: the same products in
 * the same order, no runtime branch inside a pass (f32 and f16 measured no faster in fours).
 */
fn splitState(row: RowInfo, kvHeadBase: u32, lanes: Lanes, walkFirst: u32, walkKeys: u32, split: u32) -> array<vec4<f32>, 2> {
  let headDim = params.headDim;
  // q8_0 dims read four at a time, in runs within a block (f32 and f16 measured no faster so)
  let quadDims = select(0u, headDim, headDim % 4u == 0u && KV_TYPE == KV_Q8_0);
  let kvDim = params.kvDim;
  var m = vec4<f32>(MASKED);
  var l = vec4<f32>(0.0);
  let end = min(walkKeys, (split + 1u) * SPLIT);
  let last = end - 1u;
  let span = lanes.keys - lanes.first;  // keys each lane sees (0: an unused lane)
  // tiles stay at absolute multiples of TILE: a lane's tiles never depend on the other lanes
  for (var tile = max(split * SPLIT, walkFirst - walkFirst % TILE); tile < end; tile += TILE) {
    let k0 = keySlot(row, clamp(tile, walkFirst, last)) * kvDim + kvHeadBase;
    let k1 = keySlot(row, clamp(tile + 1u, walkFirst, last)) * kvDim + kvHeadBase;
    let k2 = keySlot(row, clamp(tile + 2u, walkFirst, last)) * kvDim + kvHeadBase;
    let k3 = keySlot(row, clamp(tile + 3u, walkFirst, last)) * kvDim + kvHeadBase;
    let k4 = keySlot(row, clamp(tile + 4u, walkFirst, last)) * kvDim + kvHeadBase;
    let k5 = keySlot(row, clamp(tile + 5u, walkFirst, last)) * kvDim + kvHeadBase;
    let k6 = keySlot(row, clamp(tile + 6u, walkFirst, last)) * kvDim + kvHeadBase;
    let k7 = keySlot(row, clamp(tile + 7u, walkFirst, last)) * kvDim + kvHeadBase;
    let keys = array<u32, TILE>(k0, k1, k2, k3, k4, k5, k6, k7);
    var s0 = vec4<f32>(0.0); var s1 = s0; var s2 = s0; var s3 = s0;
    var s4 = s0; var s5 = s0; var s6 = s0; var s7 = s0;
    var d = 0u;
    while (d < quadDims) {
      let c = tileScales(keys, d, false);
      for (let run = min(quadDims, d + Q8_BLOCK - (kvHeadBase + d) % Q8_BLOCK); d < run; d += 4u) {
        let q4 = mat4x4<f32>(qv[d], qv[d + 1u], qv[d + 2u], qv[d + 3u]);
        s0 = keyDot(s0, q4, q8Quad(k0 + d, false, c[0]));
        s1 = keyDot(s1, q4, q8Quad(k1 + d, false, c[1]));
        s2 = keyDot(s2, q4, q8Quad(k2 + d, false, c[2]));
        s3 = keyDot(s3, q4, q8Quad(k3 + d, false, c[3]));
        s4 = keyDot(s4, q4, q8Quad(k4 + d, false, c[4]));
        s5 = keyDot(s5, q4, q8Quad(k5 + d, false, c[5]));
        s6 = keyDot(s6, q4, q8Quad(k6 + d, false, c[6]));
        s7 = keyDot(s7, q4, q8Quad(k7 + d, false, c[7]));
      }
    }
    for (; d < headDim; d += 2u) {  // headDim % 4 == 2
      let q2 = mat2x4<f32>(qv[d], qv[d + 1u]);
      s0 = keyDot2(s0, q2, kvPair(k0 + d, false));
      s1 = keyDot2(s1, q2, kvPair(k1 + d, false));
      s2 = keyDot2(s2, q2, kvPair(k2 + d, false));
      s3 = keyDot2(s3, q2, kvPair(k3 + d, false));
      s4 = keyDot2(s4, q2, kvPair(k4 + d, false));
      s5 = keyDot2(s5, q2, kvPair(k5 + d, false));
      s6 = keyDot2(s6, q2, kvPair(k6 + d, false));
      s7 = keyDot2(s7, q2, kvPair(k7 + d, false));
    }
    // a lane sees key j when first <= j < keys: j - first < span in u32 (a key before first wraps
    // past it), one compare a key; masked keys keep the max and weigh 0
    let rel = vec4<u32>(tile) - lanes.first;
    s0 = select(vec4<f32>(MASKED), score(s0), rel < span);
    s1 = select(vec4<f32>(MASKED), score(s1), rel + 1u < span);
    s2 = select(vec4<f32>(MASKED), score(s2), rel + 2u < span);
    s3 = select(vec4<f32>(MASKED), score(s3), rel + 3u < span);
    s4 = select(vec4<f32>(MASKED), score(s4), rel + 4u < span);
    s5 = select(vec4<f32>(MASKED), score(s5), rel + 5u < span);
    s6 = select(vec4<f32>(MASKED), score(s6), rel + 6u < span);
    s7 = select(vec4<f32>(MASKED), score(s7), rel + 7u < span);
    let newMax = max(m, max(max(max(s0, s1), max(s2, s3)), max(max(s4, s5), max(s6, s7))));
    let alpha = exp(m - newMax);
    let p0 = select(vec4<f32>(0.0), exp(s0 - newMax), rel < span);
    let p1 = select(vec4<f32>(0.0), exp(s1 - newMax), rel + 1u < span);
    let p2 = select(vec4<f32>(0.0), exp(s2 - newMax), rel + 2u < span);
    let p3 = select(vec4<f32>(0.0), exp(s3 - newMax), rel + 3u < span);
    let p4 = select(vec4<f32>(0.0), exp(s4 - newMax), rel + 4u < span);
    let p5 = select(vec4<f32>(0.0), exp(s5 - newMax), rel + 5u < span);
    let p6 = select(vec4<f32>(0.0), exp(s6 - newMax), rel + 6u < span);
    let p7 = select(vec4<f32>(0.0), exp(s7 - newMax), rel + 7u < span);
    l = l * alpha + (((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)));
    let pLo = mat4x4<f32>(p0, p1, p2, p3);
    let pHi = mat4x4<f32>(p4, p5, p6, p7);
    d = 0u;
    while (d < quadDims) {
      let c = tileScales(keys, d, true);
      for (let run = min(quadDims, d + Q8_BLOCK - (kvHeadBase + d) % Q8_BLOCK); d < run; d += 4u) {
        let lo = transpose(mat4x4<f32>(q8Quad(k0 + d, true, c[0]), q8Quad(k1 + d, true, c[1]), q8Quad(k2 + d, true, c[2]), q8Quad(k3 + d, true, c[3])));
        let hi = transpose(mat4x4<f32>(q8Quad(k4 + d, true, c[4]), q8Quad(k5 + d, true, c[5]), q8Quad(k6 + d, true, c[6]), q8Quad(k7 + d, true, c[7])));
        acc[d] = weigh(acc[d] * alpha, pLo, pHi, lo[0], hi[0]);
        acc[d + 1u] = weigh(acc[d + 1u] * alpha, pLo, pHi, lo[1], hi[1]);
        acc[d + 2u] = weigh(acc[d + 2u] * alpha, pLo, pHi, lo[2], hi[2]);
        acc[d + 3u] = weigh(acc[d + 3u] * alpha, pLo, pHi, lo[3], hi[3]);
      }
    }
    for (; d < headDim; d += 2u) {
      let lo = transpose(mat4x2<f32>(kvPair(k0 + d, true), kvPair(k1 + d, true), kvPair(k2 + d, true), kvPair(k3 + d, true)));
      let hi = transpose(mat4x2<f32>(kvPair(k4 + d, true), kvPair(k5 + d, true), kvPair(k6 + d, true), kvPair(k7 + d, true)));
      acc[d] = weigh(acc[d] * alpha, pLo, pHi, lo[0], hi[0]);
      acc[d + 1u] = weigh(acc[d + 1u] * alpha, pLo, pHi, lo[1], hi[1]);
    }
    m = newMax;
  }
  return array<vec4<f32>, 2>(m, l);
}

/**
 * (new max, weight of the running state, weight of the merged split) per lane for merging m2 into
 * rm. A split in which the lane saw no key (m2 MASKED: one wholly before its window) weighs 0, also
 * while the lane has seen none yet, where exp(m2 - newMax) would be 1: it changes no bit.
 */
fn mergeWeights(rm: vec4<f32>, m2: vec4<f32>) -> array<vec4<f32>, 3> {
  let newMax = max(rm, m2);
  return array<vec4<f32>, 3>(newMax, exp(rm - newMax), select(exp(m2 - newMax), vec4<f32>(0.0), m2 == vec4<f32>(MASKED)));
}

// An invocation's four lanes in a work item: each one's first q/out element and the keys it sees,
// [first, keys) (keys 0: an unused lane).
struct Lanes {
  qBase: vec4<u32>,
  keys: vec4<u32>,
  first: vec4<u32>,
}

/** The first key a query seeing keys < `keys` attends to: its window's start (pagedAttention's windowStart). */
fn windowFirst(keys: vec4<u32>) -> vec4<u32> {
  return select(vec4<u32>(0u), keys - min(keys, vec4<u32>(params.window)), params.window > 0u);
}

fn itemLanes(item: WorkItem, row: RowInfo, quad: u32, lid: u32) -> Lanes {
  let decode = item.kind != ITEM_PREFILL;
  let hq = params.headsPerQuad;
  let groupSize = params.numHeads / params.numKvHeads;
  let kvHead = quad / params.quadsPerKvHead;
  let firstGroupHead = (quad % params.quadsPerKvHead) * hq;  // the quad's first head within its kv group
  var laneQuery = vec4<u32>(0u);  // index among the row's tokens
  var laneHead = vec4<u32>(0u);
  var lanes: Lanes;
  for (var i = 0u; i < 4u; i++) {
    let lane = select(lid * 4u + i, i, decode);
    let qi = select(lane / hq, 0u, decode);
    let groupHead = firstGroupHead + lane % hq;
    let used = qi < item.numQueries && groupHead < groupSize && (!decode || i < hq);
    laneQuery[i] = item.firstQuery + min(qi, item.numQueries - 1u);
    laneHead[i] = kvHead * groupSize + min(groupHead, groupSize - 1u);
    lanes.keys[i] = select(0u, row.startPos + item.firstQuery + qi + 1u, used);
  }
  lanes.qBase = ((row.firstToken + laneQuery) * params.numHeads + laneHead) * params.headDim;
  lanes.first = windowFirst(lanes.keys);
  return lanes;
}

/** Index in `states` of split `split`'s state for quad `quad` of the row whose split 0 is at stateBase. */
fn stateAt(stateBase: u32, split: u32, quad: u32) -> u32 {
  let numQuads = params.numKvHeads * params.quadsPerKvHead;
  return ((stateBase + split) * numQuads + quad) * (2u + params.headDim);
}

@compute @workgroup_size(SLOTS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.y >= params.numItems) { return; }
  let item = items[wid.y];
  let row = rows[item.row];
  let decode = item.kind != ITEM_PREFILL;
  let headDim = params.headDim;
  let kvHeadBase = (wid.x / params.quadsPerKvHead) * headDim;
  let lanes = itemLanes(item, row, wid.x, lid);
  let laneKeys = lanes.keys;
  let qBase = lanes.qBase;
  let walkKeys = max(max(laneKeys.x, laneKeys.y), max(laneKeys.z, laneKeys.w));
  // the first key any used lane sees (nothing before it is read)
  let firsts = select(vec4<u32>(0xffffffffu), lanes.first, laneKeys > vec4<u32>(0u));
  let walkFirst = min(min(firsts.x, firsts.y), min(firsts.z, firsts.w));

  var rm = vec4<f32>(MASKED);
  var rl = vec4<f32>(0.0);
  // a decode row's splits in its window, [firstSplit, decodeSplits), from the item alone (uniform:
  // lid does not enter them)
  let decodeKeys = row.startPos + item.firstQuery + 1u;
  let firstSplit = windowFirst(vec4<u32>(decodeKeys)).x / SPLIT;
  let decodeSplits = (decodeKeys + SPLIT - 1u) / SPLIT;
  let numSplits = decodeSplits - firstSplit;
  // a partition round past a windowed row's splits: nothing to do (uniform, no barrier follows)
  if (item.kind == ITEM_PARTITION && item.firstSplit >= numSplits) { return; }
  let walking = walkKeys > 0u && (!decode || numSplits > 1u || lid == 0u);
  if (walking) {
    for (var d = 0u; d < headDim; d++) { qv[d] = vec4<f32>(q[qBase.x + d], q[qBase.y + d], q[qBase.z + d], q[qBase.w + d]); }
  }

  if (item.kind == ITEM_PARTITION) {
    // one round of the row's splits; `merge` folds them with the rest in ascending order
    let split = firstSplit + item.firstSplit + lid;
    if (split < decodeSplits) {
      let ml = splitState(row, kvHeadBase, lanes, walkFirst, walkKeys, split);
      let at = stateAt(item.stateBase, split, wid.x);
      states[at] = ml[0];
      states[at + 1u] = ml[1];
      for (var d = 0u; d < headDim; d++) { states[at + 2u + d] = acc[d]; }
    }
  } else if (!decode || numSplits == 1u) {
    // one invocation walks its lanes' splits in order (a one-split decode row: invocation 0)
    if (walking) {
      for (var split = walkFirst / SPLIT; split < (walkKeys + SPLIT - 1u) / SPLIT; split++) {
        let ml = splitState(row, kvHeadBase, lanes, walkFirst, walkKeys, split);
        let w = mergeWeights(rm, ml[0]);
        rl = rl * w[1] + ml[1] * w[2];
        for (var d = 0u; d < headDim; d++) { racc[d] = racc[d] * w[1] + acc[d] * w[2]; }
        rm = w[0];
      }
      for (var i = 0u; i < 4u; i++) {
        if (laneKeys[i] > 0u) {
          for (var d = 0u; d < headDim; d++) { out[qBase[i] + d] = racc[d][i] / rl[i]; }
        }
      }
    }
  } else {
    // rounds of SLOTS splits: invocation lid computes split firstSplit + round * SLOTS + lid, then
    // the split states go through workgroup memory CHUNK dims at a time and invocation lid < CHUNK
    // merges dim chunk * CHUNK + lid over the round's splits in ascending order
    let numRounds = (numSplits + SLOTS - 1u) / SLOTS;
    let numChunks = (headDim + CHUNK - 1u) / CHUNK;
    for (var round = 0u; round < numRounds; round++) {
      let split = firstSplit + round * SLOTS + lid;
      let has = split < decodeSplits;
      if (has) {
        let ml = splitState(row, kvHeadBase, lanes, walkFirst, walkKeys, split);
        splitMax[lid] = ml[0];
        splitSum[lid] = ml[1];
      }
      let count = min(SLOTS, numSplits - round * SLOTS);
      var endMax = rm;
      var endSum = rl;
      for (var chunk = 0u; chunk < numChunks; chunk++) {
        if (has) {
          for (var k = 0u; k < CHUNK; k++) {
            let d = min(chunk * CHUNK + k, MAX_HEAD_DIM - 1u);
            splitAcc[lid * CHUNK + k] = acc[d];
          }
        }
        workgroupBarrier();
        if (lid < CHUNK) {
          let d = chunk * CHUNK + lid;
          var m = rm;
          var l = rl;
          for (var s = 0u; s < count; s++) {
            let w = mergeWeights(m, splitMax[s]);
            l = l * w[1] + splitSum[s] * w[2];
            if (d < headDim) { racc[d] = racc[d] * w[1] + splitAcc[s * CHUNK + lid] * w[2]; }
            m = w[0];
          }
          endMax = m;
          endSum = l;
        }
        workgroupBarrier();  // merged before the next chunk (or round) overwrites the states
      }
      rm = endMax;
      rl = endSum;
    }
    if (lid < CHUNK) {
      for (var chunk = 0u; chunk < numChunks; chunk++) {
        let d = chunk * CHUNK + lid;
        if (d < headDim) {
          for (var i = 0u; i < 4u; i++) {
            if (laneKeys[i] > 0u) { out[qBase[i] + d] = racc[d][i] / rl[i]; }
          }
        }
      }
    }
  }
}
// A partitioned decode row's split states merged in ascending split order, one workgroup per
// (merge item, quad), invocation lid taking dims lid, lid + SLOTS, ...: the formula and order of
// the decode rounds above, so the output is bitwise theirs. Splits before the row's window were
// never computed and are not read.
@compute @workgroup_size(SLOTS)
fn merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.y >= params.numItems) { return; }
  let item = items[wid.y];
  let row = rows[item.row];
  let lanes = itemLanes(item, row, wid.x, 0u);
  let keys = row.startPos + item.firstQuery + 1u;
  let numSplits = (keys + SPLIT - 1u) / SPLIT;
  for (var d = lid; d < params.headDim; d += SLOTS) {
    var m = vec4<f32>(MASKED);
    var l = vec4<f32>(0.0);
    var a = vec4<f32>(0.0);
    for (var s = windowFirst(vec4<u32>(keys)).x / SPLIT; s < numSplits; s++) {
      let at = stateAt(item.stateBase, s, wid.x);
      let w = mergeWeights(m, states[at]);
      l = l * w[1] + states[at + 1u] * w[2];
      a = a * w[1] + states[at + 2u + d] * w[2];
      m = w[0];
    }
    for (var i = 0u; i < 4u; i++) {
      if (lanes.keys[i] > 0u) { out[lanes.qBase[i] + d] = a[i] / l[i]; }
    }
  }
}
