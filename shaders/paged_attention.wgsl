// Paged causal attention for every query of a step (decode, verify and prefill alike) in two
// passes: `main` writes one split state per (query, head, split), `merge` folds a query's states in
// order. Not a KV writer: the step's own K/V are already in the cache (rope_kv_write), so chunks see
// themselves. Twin: pagedAttention. Query at position p of row r attends to keys windowStart(p)..p
// (0..p, or p - window + 1..p on a sliding-window layer, whose earlier keys are never read: their
// blocks may be freed) through the row's block table (GQA: kv head = head / (numHeads / numKvHeads));
// scores q . k * scale, gemma2's soft-capped.
//
// Splits: a query at p cuts keys 0..p at absolute multiples of a width fixed by p alone
// (splitWidth: params.splitKeys, doubled up to a whole multiple until at most params.maxSplits
// splits remain). A work item (step-meta) is one split of up to queriesPerItem consecutive queries of
// a row. An invocation carries four lanes, the components of its vec4s: (query, head) pairs of one
// kv head (a head quad of up to 4 heads of a GQA group, times 4 / heads queries), so each K/V value
// it loads serves four lanes. A workgroup takes ITEMS items and one head quad (wid.x); LANES
// invocations an item along head_dim (invocation i holding dim quads i, i + LANES, ..., LANE_QUADS
// of them), so a key row is read by adjacent invocations at adjacent addresses. Over tiles of TILE
// keys at absolute multiples of TILE a lane keeps an online softmax (max, sum, acc) in registers
// and writes it as its split's state; tiles outside its own keys change none of its bits. `merge`
// (one workgroup per query and HEADS heads) folds the query's states in ascending split order by
// one formula, even a lone split's, and writes acc / sum. Every lane runs the same instructions on
// values fixed by its own row and position, so a query's bits depend on nothing else in the step:
// batch invariance, chunking invariance and verify rows equal to plain decode follow. q . k
// partials are summed across an item's invocations through workgroup memory in invocation order
// (never a subgroup reduction, whose order the driver picks). KV_TYPE is the cache's storage type
// (kv-arena.ts kvLayerLayout): each value is read as the f32 it decodes to (f16 via
// unpack2x16float, q8_0 as quant * f16 scale, both exact).

const TILE: u32 = 8u;           // keys per online-softmax update (held in named registers: see main)
const MAX_LANE_QUADS: u32 = 64u; // sizes the per-invocation arrays (LANE_QUADS of them are used)
const MASKED: f32 = -3.0e38;
const TANH_CLAMP: f32 = 15.0;   // f32 tanh is +-1 before 9; SwiftShader's tanh is NaN for large arguments
override KV_TYPE: u32 = 0u;     // 0 f32, 1 f16, 3 q8_0 (the DTYPE codes of matmul.wgsl)
// Scores soft-capped at params.softcap (gemma2): an override, so other models' pipelines carry no branch.
override SOFTCAP: bool = false;
// The kernel setting's shape (kernels.ts attentionShape): invocations an item along head_dim, dim
// quads an invocation (LANES * LANE_QUADS * 4 >= headDim), items and head quads a `main` workgroup,
// heads a `merge` one.
override LANES: u32 = 16u;
override LANE_QUADS: u32 = 4u;
override ITEMS: u32 = 4u;
override QUADS: u32 = 1u;
override HEADS: u32 = 4u;
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

// One item of the step (step-meta ATTENTION_ITEM_WORDS): a split of numQueries queries in `main`,
// one query in `merge` (split 0, numQueries 1).
struct WorkItem {
  row: u32,
  query: u32,       // index of its first query among the row's tokens
  split: u32,
  numQueries: u32,  // <= 4 / (heads of a quad)
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

// A tile's q . k partials [ITEMS * QUADS, TILE, LANES] (a vec4 of lanes each), then its scores [ITEMS * QUADS, TILE].
var<workgroup> partials: array<vec4<f32>, ITEMS * QUADS * TILE * LANES>;
var<workgroup> scores: array<vec4<f32>, ITEMS * QUADS * TILE>;

// An invocation's dim quads j of its four lanes' queries and V sums (column = lane), read and
// written once a tile. Module scope: SwiftShader keeps function-scope arrays no faster.
var<private> qv: array<mat4x4<f32>, MAX_LANE_QUADS>;
var<private> acc: array<mat4x4<f32>, MAX_LANE_QUADS>;

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

/** Four lanes' raw q . k sums as scores: times scale, then soft-capped where the model caps (gemma2). */
fn score(dotSums: vec4<f32>) -> vec4<f32> {
  let s = dotSums * params.scale;
  if (SOFTCAP) { return params.softcap * tanh(clamp(s / params.softcap, vec4<f32>(-TANH_CLAMP), vec4<f32>(TANH_CLAMP))); }
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

/** Keys [lo, hi) of split `split` of the query seeing keys < `keys`, in its window (lo >= hi: none). */
fn splitKeys(keys: u32, split: u32) -> vec2<u32> {
  let width = splitWidth(keys);
  return vec2<u32>(max(split * width, windowFirst(keys)), min((split + 1u) * width, keys));
}

/** The keys item `index` reads: the union of its queries' split ranges (lo >= hi: none). */
fn itemKeys(index: u32) -> vec2<u32> {
  let item = items[index];
  let start = rows[item.row].startPos + item.query;
  var range = vec2<u32>(0xffffffffu, 0u);
  for (var i = 0u; i < item.numQueries; i++) {
    let r = splitKeys(start + i + 1u, item.split);
    if (r.x < r.y) { range = vec2<u32>(min(range.x, r.x), max(range.y, r.y)); }
  }
  return range;
}

/** Tiles at absolute multiples of TILE holding keys [range.x, range.y) (0 where that is empty). */
fn tilesOf(range: vec2<u32>) -> u32 {
  if (range.x >= range.y) { return 0u; }
  return (range.y - 1u) / TILE - range.x / TILE + 1u;
}

/** The cache slot of key `key` (in [tile, tile + TILE)): one block table read a tile where blocks hold whole tiles. */
fn tileKeySlot(row: RowInfo, tile: u32, tileSlot: u32, key: u32) -> u32 {
  if (params.blockSize % TILE == 0u) { return tileSlot + (key - tile); }
  return keySlot(row, key);
}

/** The K/V row starts (x: slot * kvDim + kvBase) of keys k..k + 3 of the tile at `tile`, each clamped into [lo, hi). */
fn tileRows(row: RowInfo, tile: u32, tileSlot: u32, k: u32, range: vec2<u32>, kvBase: u32) -> vec4<u32> {
  let keys = clamp(vec4<u32>(k) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(range.x), vec4<u32>(range.y - 1u));
  let slots = vec4<u32>(tileKeySlot(row, tile, tileSlot, keys.x), tileKeySlot(row, tile, tileSlot, keys.y),
                        tileKeySlot(row, tile, tileSlot, keys.z), tileKeySlot(row, tile, tileSlot, keys.w));
  return slots * params.kvDim + kvBase;
}

/** Which lanes see key k: lo <= k < hi per lane. */
fn seen(k: u32, lo: vec4<u32>, hi: vec4<u32>) -> vec4<bool> {
  return (vec4<u32>(k) >= lo) & (vec4<u32>(k) < hi);
}

/** Four lanes' dim quads at x (one per column) of q. */
fn queryQuads(x: vec4<u32>) -> mat4x4<f32> {
  return mat4x4<f32>(vec4<f32>(q[x.x], q[x.x + 1u], q[x.x + 2u], q[x.x + 3u]), vec4<f32>(q[x.y], q[x.y + 1u], q[x.y + 2u], q[x.y + 3u]),
                     vec4<f32>(q[x.z], q[x.z + 1u], q[x.z + 2u], q[x.z + 3u]), vec4<f32>(q[x.w], q[x.w + 1u], q[x.w + 2u], q[x.w + 3u]));
}

/** Where (token, head, split)'s state starts in `states`. */
fn stateAt(token: u32, head: u32, split: u32) -> u32 {
  return ((token * params.numHeads + head) * params.maxSplits + split) * (2u + params.headDim);
}

@compute @workgroup_size(LANES * QUADS * ITEMS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let lane = lid % LANES;                   // dim quads lane, lane + LANES, ...
  let slot = lid / LANES;                   // (item slot, quad slot): its partials and scores
  let index = wid.y * ITEMS + slot / QUADS;
  let quad = wid.x * QUADS + slot % QUADS;  // head quad: kv head quad / quadsPerKv, heads from its first
  // an item walks its own tiles, from the one holding its first key; the loop runs to the most
  // tiles any of the workgroup's items walks, so its bounds (and the barriers inside it) are the
  // same for every invocation, and items of like length (a query's splits, a chunk's query groups)
  // keep every invocation busy
  var walkTiles = 0u;
  for (var i = 0u; i < ITEMS; i++) {
    if (wid.y * ITEMS + i < params.numItems) { walkTiles = max(walkTiles, tilesOf(itemKeys(wid.y * ITEMS + i))); }
  }
  let group = params.numHeads / params.numKvHeads;
  let quadHeads = min(4u, group);
  let quadsPerKv = (group + quadHeads - 1u) / quadHeads;
  let item = items[min(index, params.numItems - 1u)];
  let row = rows[item.row];
  let kvHead = min(quad / quadsPerKv, params.numKvHeads - 1u);
  let firstHead = kvHead * group + (quad % quadsPerKv) * quadHeads;
  let endHead = min(firstHead + quadHeads, (kvHead + 1u) * group);  // past the quad's last head
  // lane c: query c / quadHeads of the item, head firstHead + c % quadHeads; a lane past the item's
  // queries or the quad's heads computes a real lane's sums and stores none
  let c = vec4<u32>(0u, 1u, 2u, 3u);
  let used = index < params.numItems && quad < params.numKvHeads * quadsPerKv;
  let laneUsed = vec4<bool>(used) & (c / quadHeads < vec4<u32>(item.numQueries)) & (firstHead + c % quadHeads < vec4<u32>(endHead));
  let laneQuery = item.query + min(c / quadHeads, vec4<u32>(item.numQueries - 1u));
  let laneHead = min(firstHead + c % quadHeads, vec4<u32>(endHead - 1u));
  let keys = vec4<u32>(row.startPos) + laneQuery + 1u;
  let r0 = splitKeys(keys.x, item.split);
  let r1 = splitKeys(keys.y, item.split);
  let r2 = splitKeys(keys.z, item.split);
  let r3 = splitKeys(keys.w, item.split);
  let lo = select(vec4<u32>(0u), vec4<u32>(r0.x, r1.x, r2.x, r3.x), laneUsed);
  let hi = select(vec4<u32>(0u), vec4<u32>(r0.y, r1.y, r2.y, r3.y), laneUsed);  // lo >= hi: the lane sees no key
  let range = select(vec2<u32>(0u), itemKeys(min(index, params.numItems - 1u)), used);  // the keys this item reads
  let headDim = params.headDim;
  let numQuads = headDim / 4u;
  let kvBase = kvHead * headDim;
  let tokens = vec4<u32>(row.firstToken) + laneQuery;
  let qBase = (tokens * params.numHeads + laneHead) * headDim;
  for (var j = 0u; j < LANE_QUADS; j++) {
    let d = 4u * (lane + j * LANES);
    if (d >= headDim) { break; }
    qv[j] = queryQuads(qBase + d);
    acc[j] = mat4x4<f32>();
  }
  var m = vec4<f32>(MASKED);
  var l = vec4<f32>(0.0);
  // A tile's eight keys sit in named registers (their rows in xa, xb; lane scores in d0..d7), never
  // in an array indexed by a loop counter: compilers that do not unroll (SwiftShader) keep them in
  // registers, and each dim quad of q and acc is read once a tile. Keys outside [range.x, range.y)
  // read its nearest key's row (read, finite, in every lane's window) and every lane weighs keys
  // outside its own [lo, hi) 0; a tile none of an invocation's lanes sees leaves its state as it was.
  let firstTile = range.x - range.x % TILE;
  for (var t = 0u; t < walkTiles; t++) {
    let tile = firstTile + t * TILE;
    let reads = used && tile < range.y;
    var d0 = vec4<f32>(0.0); var d1 = d0; var d2 = d0; var d3 = d0;
    var d4 = d0; var d5 = d0; var d6 = d0; var d7 = d0;
    var xa = vec4<u32>(0u);
    var xb = vec4<u32>(0u);
    if (reads) {
      // blocks holding whole tiles: the tile's first slot, one block table read (its block holds range.x or range.y - 1)
      var tileSlot = 0u;
      if (params.blockSize % TILE == 0u) { tileSlot = keySlot(row, tile); }
      xa = tileRows(row, tile, tileSlot, tile, range, kvBase);
      xb = tileRows(row, tile, tileSlot, tile + 4u, range, kvBase);
      for (var j = 0u; j < LANE_QUADS; j++) {
        let dq = lane + j * LANES;
        if (dq >= numQuads) { break; }
        let o = 4u * dq;
        let qq = qv[j];
        d0 += kvQuad(xa.x + o, false) * qq;
        d1 += kvQuad(xa.y + o, false) * qq;
        d2 += kvQuad(xa.z + o, false) * qq;
        d3 += kvQuad(xa.w + o, false) * qq;
        d4 += kvQuad(xb.x + o, false) * qq;
        d5 += kvQuad(xb.y + o, false) * qq;
        d6 += kvQuad(xb.z + o, false) * qq;
        d7 += kvQuad(xb.w + o, false) * qq;
      }
    }
    if (LANES > 1u) {
      // an item's invocations' partials summed in invocation order: invocation i sums keys i, i + LANES, ...
      let at = slot * TILE * LANES + lane;
      partials[at] = d0;
      partials[at + LANES] = d1;
      partials[at + 2u * LANES] = d2;
      partials[at + 3u * LANES] = d3;
      partials[at + 4u * LANES] = d4;
      partials[at + 5u * LANES] = d5;
      partials[at + 6u * LANES] = d6;
      partials[at + 7u * LANES] = d7;
      workgroupBarrier();
      for (var k = lane; k < TILE; k += LANES) {
        var sum = vec4<f32>(0.0);
        for (var i = 0u; i < LANES; i++) { sum += partials[(slot * TILE + k) * LANES + i]; }
        scores[slot * TILE + k] = sum;
      }
      workgroupBarrier();
      d0 = scores[slot * TILE];
      d1 = scores[slot * TILE + 1u];
      d2 = scores[slot * TILE + 2u];
      d3 = scores[slot * TILE + 3u];
      d4 = scores[slot * TILE + 4u];
      d5 = scores[slot * TILE + 5u];
      d6 = scores[slot * TILE + 6u];
      d7 = scores[slot * TILE + 7u];
    }
    if (reads) {
      let e0 = seen(tile, lo, hi);
      let e1 = seen(tile + 1u, lo, hi);
      let e2 = seen(tile + 2u, lo, hi);
      let e3 = seen(tile + 3u, lo, hi);
      let e4 = seen(tile + 4u, lo, hi);
      let e5 = seen(tile + 5u, lo, hi);
      let e6 = seen(tile + 6u, lo, hi);
      let e7 = seen(tile + 7u, lo, hi);
      let masked = vec4<f32>(MASKED);
      let s0 = select(masked, score(d0), e0);
      let s1 = select(masked, score(d1), e1);
      let s2 = select(masked, score(d2), e2);
      let s3 = select(masked, score(d3), e3);
      let s4 = select(masked, score(d4), e4);
      let s5 = select(masked, score(d5), e5);
      let s6 = select(masked, score(d6), e6);
      let s7 = select(masked, score(d7), e7);
      let tileMax = max(m, max(max(max(s0, s1), max(s2, s3)), max(max(s4, s5), max(s6, s7))));
      let alpha = exp(m - tileMax);
      let zero = vec4<f32>(0.0);
      let p0 = select(zero, exp(s0 - tileMax), e0);
      let p1 = select(zero, exp(s1 - tileMax), e1);
      let p2 = select(zero, exp(s2 - tileMax), e2);
      let p3 = select(zero, exp(s3 - tileMax), e3);
      let p4 = select(zero, exp(s4 - tileMax), e4);
      let p5 = select(zero, exp(s5 - tileMax), e5);
      let p6 = select(zero, exp(s6 - tileMax), e6);
      let p7 = select(zero, exp(s7 - tileMax), e7);
      l = l * alpha + p0 + p1 + p2 + p3 + p4 + p5 + p6 + p7;  // in key order
      let lanesSeen = e0 | e1 | e2 | e3 | e4 | e5 | e6 | e7;
      let wLo = transpose(mat4x4<f32>(p0, p1, p2, p3));  // column c: lane c's weights of keys 0..3
      let wHi = transpose(mat4x4<f32>(p4, p5, p6, p7));
      for (var j = 0u; j < LANE_QUADS; j++) {
        let dq = lane + j * LANES;
        if (dq >= numQuads) { break; }
        let o = 4u * dq;
        // the tile's V rows of this dim quad, each loaded once for the four lanes
        let vLo = mat4x4<f32>(kvQuad(xa.x + o, true), kvQuad(xa.y + o, true), kvQuad(xa.z + o, true), kvQuad(xa.w + o, true));
        let vHi = mat4x4<f32>(kvQuad(xb.x + o, true), kvQuad(xb.y + o, true), kvQuad(xb.z + o, true), kvQuad(xb.w + o, true));
        let a = acc[j];
        acc[j] = mat4x4<f32>(
          select(a[0], a[0] * alpha.x + vLo * wLo[0] + vHi * wHi[0], lanesSeen.x),
          select(a[1], a[1] * alpha.y + vLo * wLo[1] + vHi * wHi[1], lanesSeen.y),
          select(a[2], a[2] * alpha.z + vLo * wLo[2] + vHi * wHi[2], lanesSeen.z),
          select(a[3], a[3] * alpha.w + vLo * wLo[3] + vHi * wHi[3], lanesSeen.w));
      }
      m = tileMax;
    }
  }
  for (var k = 0u; k < 4u; k++) {
    if (!laneUsed[k] || lo[k] >= hi[k]) { continue; }
    let at = stateAt(tokens[k], laneHead[k], item.split);
    if (lane == 0u) {
      states[at] = m[k];
      states[at + 1u] = l[k];
    }
    for (var j = 0u; j < LANE_QUADS; j++) {
      let d = 4u * (lane + j * LANES);
      if (d >= headDim) { break; }
      let a = acc[j][k];
      states[at + 2u + d] = a.x;
      states[at + 3u + d] = a.y;
      states[at + 4u + d] = a.z;
      states[at + 5u + d] = a.w;
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
  var merged: array<vec4<f32>, MAX_LANE_QUADS>;
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
      merged[j] = merged[j] * a1 + vec4<f32>(states[a], states[a + 1u], states[a + 2u], states[a + 3u]) * a2;
    }
    m = newMax;
  }
  let outBase = (token * params.numHeads + head) * headDim;
  for (var j = 0u; j < LANE_QUADS; j++) {
    let d = 4u * (lane + j * LANES);
    if (d >= headDim) { break; }
    let o = merged[j] / l;
    out[outBase + d] = o.x;
    out[outBase + d + 1u] = o.y;
    out[outBase + d + 2u] = o.z;
    out[outBase + d + 3u] = o.w;
  }
}
