// Paged causal attention for decode rows and prefill chunks in one launch, one workgroup per
// (work item, head). Not a KV writer: the step's own K/V must already be in the cache
// (rope_kv_write) so chunks see themselves. Twin: pagedAttention.
// A query at position p of row r attends to its row's positions 0..p through the row's block
// table (GQA: kv head = head / (numHeads / numKvHeads)). Work items come from step-meta:
// - prefill (a row feeding several tokens): up to SLOTS consecutive queries of the row, one per
//   invocation, walking the row's keys together, so each K/V row is fetched once per block of
//   queries instead of once per query;
// - decode (a row feeding one token): the one query, its keys cut into splits, invocation s
//   taking splits s, s + SLOTS, ...: each hands its split's (max, sum, acc) over in workgroup
//   memory and the workgroup merges them in ascending split order (a context that fits one
//   split runs on invocation 0 alone, as a prefill query would).
// Every query's arithmetic is fixed by its own position: keys in splits of SPLIT at absolute
// boundaries, each split an online softmax over tiles of TILE keys from a fresh state, the splits
// merged in ascending order by the same formula in both kinds of item. So a row's output is
// bitwise the same whatever else rides in the step and however its prompt was chunked.

const SLOTS: u32 = 16u;  // invocations per workgroup: queries of a prefill item, splits of a decode round
const SPLIT: u32 = 32u;  // keys per split
const TILE: u32 = 8u;    // keys per online-softmax update
const CHUNK: u32 = 16u;  // dims of the decode split states merged per pass through workgroup memory
const MAX_HEAD_DIM: u32 = 128u;  // sizes the private arrays, which every invocation zero-fills
const MASKED: f32 = -3.0e38;

struct Params {
  numItems: u32,
  numHeads: u32,
  numKvHeads: u32,
  headDim: u32,
  blockSize: u32,
  kvDim: u32,     // numKvHeads * headDim
  vOffset: u32,   // floats from the layer's K cache to its V cache
  scale: f32,     // 1 / sqrt(headDim)
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
  numQueries: u32,  // <= SLOTS; 1 for decode
  decode: u32,      // 1: invocations take splits of one query's keys
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> rows: array<RowInfo>;      // [numRows]
@group(0) @binding(2) var<storage, read> items: array<WorkItem>;    // [numItems]
@group(0) @binding(3) var<storage, read> blockTables: array<u32>;   // rows' block tables, concatenated
@group(0) @binding(4) var<storage, read> q: array<f32>;             // [numTokens, numHeads, headDim]
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape.
@group(0) @binding(5) var<storage, read> kv: array<f32>;
@group(0) @binding(6) var<storage, read_write> out: array<f32>;     // [numTokens, numHeads, headDim]

// One decode round's split states (max, sum, CHUNK dims of acc at a time), by split slot.
var<workgroup> splitMax: array<f32, SLOTS>;
var<workgroup> splitSum: array<f32, SLOTS>;
var<workgroup> splitAcc: array<f32, SLOTS * CHUNK>;

/**
 * Online softmax over keys [split * SPLIT, min(numKeys, (split + 1) * SPLIT)) from a fresh state:
 * returns (max, sum) and leaves the unnormalized sum of weighted V rows in acc.
 */
fn splitState(row: RowInfo, kvHeadBase: u32, qBase: u32, numKeys: u32, split: u32, acc: ptr<function, array<f32, MAX_HEAD_DIM>>) -> vec2<f32> {
  let headDim = params.headDim;
  let bs = params.blockSize;
  let n4 = headDim & ~3u;
  for (var d = 0u; d < headDim; d++) { (*acc)[d] = 0.0; }
  var m = MASKED;
  var l = 0.0;
  var scores: array<f32, TILE>;
  var cacheSlots: array<u32, TILE>;
  let end = min(numKeys, (split + 1u) * SPLIT);
  for (var tile = split * SPLIT; tile < end; tile += TILE) {
    let count = min(TILE, end - tile);
    var tileMax = MASKED;
    // the cache slot of key j = tile + k, stepped along the block table: one division per tile
    var block = tile / bs;
    var within = tile % bs;
    var blockBase = blockTables[row.blockTableOffset + block] * bs;
    for (var k = 0u; k < count; k++) {
      let cacheSlot = blockBase + within;
      within++;
      if (within == bs) {
        within = 0u;
        block++;
        blockBase = blockTables[row.blockTableOffset + block] * bs;  // past the table's end only after its last key: unused
      }
      cacheSlots[k] = cacheSlot;
      let kBase = cacheSlot * params.kvDim + kvHeadBase;
      // four lanes like the twin's dot(): lane i sums the dims = i mod 4
      var s = vec4<f32>(0.0);
      for (var d = 0u; d < n4; d += 4u) {
        s += vec4<f32>(q[qBase + d], q[qBase + d + 1u], q[qBase + d + 2u], q[qBase + d + 3u]) * vec4<f32>(kv[kBase + d], kv[kBase + d + 1u], kv[kBase + d + 2u], kv[kBase + d + 3u]);
      }
      if (n4 < headDim) { s.x += q[qBase + n4] * kv[kBase + n4]; s.y += q[qBase + n4 + 1u] * kv[kBase + n4 + 1u]; }
      let score = ((s.x + s.y) + (s.z + s.w)) * params.scale;
      scores[k] = score;
      tileMax = max(tileMax, score);
    }
    let newMax = max(m, tileMax);
    let alpha = exp(m - newMax);
    l *= alpha;
    for (var d = 0u; d < headDim; d++) { (*acc)[d] *= alpha; }
    for (var k = 0u; k < count; k++) {
      let p = exp(scores[k] - newMax);
      l += p;
      let vBase = params.vOffset + cacheSlots[k] * params.kvDim + kvHeadBase;
      for (var d = 0u; d < headDim; d++) { (*acc)[d] += p * kv[vBase + d]; }
    }
    m = newMax;
  }
  return vec2<f32>(m, l);
}

/** (new max, weight of the running state, weight of the merged split) for merging max m2 into rm. */
fn mergeWeights(rm: f32, m2: f32) -> vec3<f32> {
  let newMax = max(rm, m2);
  return vec3<f32>(newMax, exp(rm - newMax), exp(m2 - newMax));
}

@compute @workgroup_size(SLOTS)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = wid.x;
  if (wid.y >= params.numItems) { return; }
  let item = items[wid.y];
  let row = rows[item.row];
  let decode = item.decode != 0u;
  let headDim = params.headDim;
  // this invocation's query (unused prefill slots compute nothing)
  let queryIndex = select(min(item.firstQuery + lid, row.numTokens - 1u), item.firstQuery, decode);
  let used = decode || lid < item.numQueries;
  let t = row.firstToken + queryIndex;
  let numKeys = row.startPos + queryIndex + 1u;
  let numSplits = (numKeys + SPLIT - 1u) / SPLIT;
  let kvHeadBase = (h / (params.numHeads / params.numKvHeads)) * headDim;
  let qBase = (t * params.numHeads + h) * headDim;
  var acc: array<f32, MAX_HEAD_DIM>;  // [headDim] one split's weighted V sum
  var racc: array<f32, MAX_HEAD_DIM>; // [headDim] the merged splits so far (decode: dims chunk * CHUNK + lid)
  var rm = MASKED;
  var rl = 0.0;
  // a decode row's one query and its splits, from the item alone (uniform: lid does not enter them)
  let decodeKeys = row.startPos + item.firstQuery + 1u;
  let decodeSplits = (decodeKeys + SPLIT - 1u) / SPLIT;

  if (!decode || decodeSplits == 1u) {
    // one invocation per query walks its splits in order (a one-split decode row: invocation 0)
    if (used && (!decode || lid == 0u)) {
      for (var split = 0u; split < numSplits; split++) {
        let ml = splitState(row, kvHeadBase, qBase, numKeys, split, &acc);
        let w = mergeWeights(rm, ml.x);
        rl = rl * w.y + ml.y * w.z;
        for (var d = 0u; d < headDim; d++) { racc[d] = racc[d] * w.y + acc[d] * w.z; }
        rm = w.x;
      }
      for (var d = 0u; d < headDim; d++) { out[qBase + d] = racc[d] / rl; }
    }
  } else {
    // rounds of SLOTS splits: invocation lid computes split round * SLOTS + lid, then the split
    // states go through workgroup memory CHUNK dims at a time and invocation lid < CHUNK merges
    // dim chunk * CHUNK + lid over the round's splits in ascending order
    let numRounds = (decodeSplits + SLOTS - 1u) / SLOTS;
    let numChunks = (headDim + CHUNK - 1u) / CHUNK;
    for (var round = 0u; round < numRounds; round++) {
      let split = round * SLOTS + lid;
      let has = split < decodeSplits;
      if (has) {
        let ml = splitState(row, kvHeadBase, qBase, decodeKeys, split, &acc);
        splitMax[lid] = ml.x;
        splitSum[lid] = ml.y;
      }
      let count = min(SLOTS, decodeSplits - round * SLOTS);
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
            l = l * w.y + splitSum[s] * w.z;
            if (d < headDim) { racc[d] = racc[d] * w.y + splitAcc[s * CHUNK + lid] * w.z; }
            m = w.x;
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
        if (d < headDim) { out[qBase + d] = racc[d] / rl; }
      }
    }
  }
}
