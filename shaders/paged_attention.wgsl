// Paged causal attention for every query of a step (decode, verify and prefill alike) in two
// passes: `main` writes one split state per work item, `merge` folds a query's states in order. Not a KV writer: the step's own K/V are already in the cache
// (rope_kv_write), so chunks see themselves. Twin: pagedAttention. Query at position p of row r
// attends to keys windowStart(p)..p (0..p, or p - window + 1..p on a sliding-window layer, whose
// earlier keys are never read: their blocks may be freed) through the row's block table (GQA: kv
// head = head / (numHeads / numKvHeads)); scores q . k * scale, gemma2's soft-capped.
//
// Splits: a query at p cuts keys 0..p at absolute multiples of a width fixed by p alone
// (splitWidth: params.splitKeys, doubled up to a whole multiple until at most params.maxSplits
// splits remain). A work item (step-meta) is one (query, split); a workgroup takes one item and HEADS
// consecutive heads, LANES lanes a head along head_dim (lane i holding dim quads i, i + LANES, ...,
// LANE_QUADS of them), so a key row is read by adjacent lanes at adjacent addresses. Over tiles of
// TILE keys it keeps an online softmax (max, sum, acc) in registers and writes it as the split's
// state. `merge` (one workgroup per query and head block) folds the query's states in ascending split
// order by one formula, even a lone split's, and writes acc / sum. Every query runs the same
// instructions on values fixed by its own row and position, so its bits depend on nothing else in
// the step: batch invariance, chunking invariance and verify rows equal to plain decode follow.
// q . k partials are summed across a head's lanes through workgroup memory in lane order (never a
// subgroup reduction, whose order the driver picks). KV_TYPE is the cache's storage type
// (kv-arena.ts kvLayerLayout): each value is read as the f32 it decodes to (f16 via
// unpack2x16float, q8_0 as quant * f16 scale, both exact).

const TILE: u32 = 16u;          // keys per online-softmax update
const MAX_LANE_QUADS: u32 = 64u; // sizes the per-lane registers (LANE_QUADS of them are used)
const MASKED: f32 = -3.0e38;
const TANH_CLAMP: f32 = 15.0;   // f32 tanh is +-1 before 9; SwiftShader's tanh is NaN for large arguments
override KV_TYPE: u32 = 0u;     // 0 f32, 1 f16, 3 q8_0 (the DTYPE codes of matmul.wgsl)
// Scores soft-capped at params.softcap (gemma2): an override, so other models' pipelines carry no branch.
override SOFTCAP: bool = false;
// The kernel setting's shape (kernels.ts attentionShape): lanes a head, heads a workgroup, dim
// quads a lane (LANES * LANE_QUADS * 4 >= headDim).
override LANES: u32 = 16u;
override HEADS: u32 = 4u;
override LANE_QUADS: u32 = 4u;
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
  splitKeys: u32,      // the narrowest split (a multiple of TILE)
  maxSplits: u32,      // most splits of one query, and the states' stride
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

// One workgroup's share of the step (step-meta ATTENTION_ITEM_WORDS): a query's split in `main`,
// a query in `merge` (split 0).
struct WorkItem {
  row: u32,
  query: u32,  // index among the row's tokens
  split: u32,
  pad0: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> rows: array<RowInfo>;      // [numRows]
@group(0) @binding(2) var<storage, read> items: array<WorkItem>;    // [numItems]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;   // rows' block tables, concatenated
@group(0) @binding(4) var<storage, read> q: array<f32>;             // [numTokens, numHeads, headDim]
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape, in KV_TYPE's words.
@group(0) @binding(5) var<storage, read> kv: array<u32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;     // [numTokens, numHeads, headDim]
// Split states: [numTokens, numHeads, maxSplits, 2 + headDim], each (max, sum, acc[headDim]).
@group(0) @binding(7) var<storage, read_write> states: array<f32>;

// A tile's q . k partials [HEADS, TILE, LANES], then its scores [HEADS, TILE].
var<workgroup> partials: array<f32, HEADS * TILE * LANES>;
var<workgroup> scores: array<f32, HEADS * TILE>;

/** Dims x..x + 3 (x % 4 == 0) of the layer's K region (v = false) or V region, x from its start. */
fn kvQuad(x: u32, v: bool) -> vec4<f32> {
  let region = select(0u, params.vOffset, v);
  if (KV_TYPE == KV_Q8_0) {
    let w = bitcast<i32>(kv[region + x / 4u]);  // quant x in the low byte
    let d = unpack2x16float(kv[2u * params.vOffset + x / Q8_BLOCK])[select(0u, 1u, v)];
    return vec4<f32>(f32((w << 24u) >> 24u), f32((w << 16u) >> 24u), f32((w << 8u) >> 24u), f32(w >> 24u)) * d;
  } else if (KV_TYPE == KV_F16) {
    return vec4<f32>(unpack2x16float(kv[region + x / 2u]), unpack2x16float(kv[region + x / 2u + 1u]));
  }
  return bitcast<vec4<f32>>(vec4<u32>(kv[region + x], kv[region + x + 1u], kv[region + x + 2u], kv[region + x + 3u]));
}

/** The cache slot of key `key` of the row, through its block table. */
fn keySlot(row: RowInfo, key: u32) -> u32 {
  let bs = params.blockSize;
  return blockTables[row.blockTableOffset + key / bs] * bs + key % bs;
}

/** A raw q . k sum as a score: times scale, then soft-capped where the model caps (gemma2). */
fn score(dotSum: f32) -> f32 {
  let s = dotSum * params.scale;
  if (SOFTCAP) { return params.softcap * tanh(clamp(s / params.softcap, -TANH_CLAMP, TANH_CLAMP)); }
  return s;
}

/** Keys of each split of a query seeing keys 0..keys - 1: from its position alone (kernels.ts attentionSplitWidth). */
fn splitWidth(keys: u32) -> u32 {
  let narrow = (keys + params.splitKeys - 1u) / params.splitKeys;
  return params.splitKeys * ((narrow + params.maxSplits - 1u) / params.maxSplits);
}

/** The first key a query seeing keys < `keys` attends to: its window's start (pagedAttention's windowStart). */
fn windowFirst(keys: u32) -> u32 {
  return select(0u, keys - min(keys, params.window), params.window > 0u);
}

/** Where (token, head, split)'s state starts in `states`. */
fn stateAt(token: u32, head: u32, split: u32) -> u32 {
  return ((token * params.numHeads + head) * params.maxSplits + split) * (2u + params.headDim);
}

@compute @workgroup_size(LANES * HEADS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.y >= params.numItems) { return; }
  let item = items[wid.y];
  let row = rows[item.row];
  let keys = row.startPos + item.query + 1u;
  let width = splitWidth(keys);
  let first = windowFirst(keys);
  // keys [lo, hi) of this split in the window; a split wholly before it is never merged (uniform)
  let lo = max(item.split * width, first);
  let hi = min((item.split + 1u) * width, keys);
  if (lo >= hi) { return; }
  let slot = lid / LANES;
  let lane = lid % LANES;
  let head = wid.x * HEADS + slot;
  let used = head < params.numHeads;
  let h = min(head, params.numHeads - 1u);  // an unused slot computes a real head's sums and stores none
  let headDim = params.headDim;
  let numQuads = headDim / 4u;
  let kvBase = (h / (params.numHeads / params.numKvHeads)) * headDim;
  let token = row.firstToken + item.query;
  let qBase = (token * params.numHeads + h) * headDim;

  var qv: array<vec4<f32>, MAX_LANE_QUADS>;
  var acc: array<vec4<f32>, MAX_LANE_QUADS>;
  for (var j = 0u; j < LANE_QUADS; j++) {
    let d = 4u * (lane + j * LANES);
    if (d >= headDim) { break; }
    qv[j] = vec4<f32>(q[qBase + d], q[qBase + d + 1u], q[qBase + d + 2u], q[qBase + d + 3u]);
  }
  var m = MASKED;
  var l = 0.0;
  // tiles at absolute multiples of TILE; keys outside [lo, hi) read key lo's or hi - 1's row (read,
  // finite, in the window) and weigh 0
  for (var tile = lo - lo % TILE; tile < hi; tile += TILE) {
    var s: array<f32, TILE>;
    var xs: array<u32, TILE>;  // each key's K/V row: the block table is read once a key
    for (var k = 0u; k < TILE; k++) {
      let x = keySlot(row, clamp(tile + k, lo, hi - 1u)) * params.kvDim + kvBase;
      xs[k] = x;
      var part = 0.0;
      for (var j = 0u; j < LANE_QUADS; j++) {
        let quad = lane + j * LANES;
        if (quad >= numQuads) { break; }
        part += dot(qv[j], kvQuad(x + 4u * quad, false));
      }
      s[k] = part;
    }
    if (LANES > 1u) {
      // a head's lanes' partials summed in lane order: lane i sums keys i, i + LANES, ...
      for (var k = 0u; k < TILE; k++) { partials[(slot * TILE + k) * LANES + lane] = s[k]; }
      workgroupBarrier();
      for (var k = lane; k < TILE; k += LANES) {
        var sum = 0.0;
        for (var i = 0u; i < LANES; i++) { sum += partials[(slot * TILE + k) * LANES + i]; }
        scores[slot * TILE + k] = sum;
      }
      workgroupBarrier();
      for (var k = 0u; k < TILE; k++) { s[k] = scores[slot * TILE + k]; }
    }
    var tileMax = m;
    for (var k = 0u; k < TILE; k++) {
      let seen = tile + k >= lo && tile + k < hi;
      s[k] = select(MASKED, score(s[k]), seen);
      tileMax = max(tileMax, s[k]);
    }
    let alpha = exp(m - tileMax);
    var p: array<f32, TILE>;
    var pSum = 0.0;
    for (var k = 0u; k < TILE; k++) {
      p[k] = select(0.0, exp(s[k] - tileMax), tile + k >= lo && tile + k < hi);
      pSum += p[k];
    }
    l = l * alpha + pSum;
    // a dim quad's accumulator is read and written once a tile, its keys added in key order
    for (var j = 0u; j < LANE_QUADS; j++) {
      let quad = lane + j * LANES;
      if (quad >= numQuads) { break; }
      var a = acc[j] * alpha;
      for (var k = 0u; k < TILE; k++) { a += p[k] * kvQuad(xs[k] + 4u * quad, true); }
      acc[j] = a;
    }
    m = tileMax;
  }
  if (used) {
    let at = stateAt(token, h, item.split);
    if (lane == 0u) {
      states[at] = m;
      states[at + 1u] = l;
    }
    for (var j = 0u; j < LANE_QUADS; j++) {
      let d = 4u * (lane + j * LANES);
      if (d >= headDim) { break; }
      states[at + 2u + d] = acc[j].x;
      states[at + 3u + d] = acc[j].y;
      states[at + 4u + d] = acc[j].z;
      states[at + 5u + d] = acc[j].w;
    }
  }
}

// A query's split states in ascending split order, one workgroup per (merge item, head block),
// each lane merging its own dim quads: new max M = max(m, m2), running state times exp(m - M),
// the split's times exp(m2 - M). From the empty state (MASKED, 0, 0) the first split is taken
// exactly (times 1, the empty state times 0), so a lone split gives acc / sum. Splits wholly
// before the query's window were never written and are not read.
@compute @workgroup_size(LANES * HEADS)
fn merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.y >= params.numItems) { return; }
  let item = items[wid.y];
  let row = rows[item.row];
  let head = wid.x * HEADS + lid / LANES;
  if (head >= params.numHeads) { return; }
  let lane = lid % LANES;
  let headDim = params.headDim;
  let keys = row.startPos + item.query + 1u;
  let width = splitWidth(keys);
  let token = row.firstToken + item.query;
  var m = MASKED;
  var l = 0.0;
  var acc: array<vec4<f32>, MAX_LANE_QUADS>;
  for (var split = windowFirst(keys) / width; split * width < keys; split++) {
    let at = stateAt(token, head, split);
    let m2 = states[at];
    let newMax = max(m, m2);
    let a1 = exp(m - newMax);
    let a2 = exp(m2 - newMax);
    l = l * a1 + states[at + 1u] * a2;
    for (var j = 0u; j < LANE_QUADS; j++) {
      let d = 4u * (lane + j * LANES);
      if (d >= headDim) { break; }
      let a = at + 2u + d;
      acc[j] = acc[j] * a1 + vec4<f32>(states[a], states[a + 1u], states[a + 2u], states[a + 3u]) * a2;
    }
    m = newMax;
  }
  let outBase = (token * params.numHeads + head) * headDim;
  for (var j = 0u; j < LANE_QUADS; j++) {
    let d = 4u * (lane + j * LANES);
    if (d >= headDim) { break; }
    let o = acc[j] / l;
    out[outBase + d] = o.x;
    out[outBase + d + 1u] = o.y;
    out[outBase + d + 2u] = o.z;
    out[outBase + d + 3u] = o.w;
  }
}
