// Sampling, one workgroup per sampling row: greedy, temperature, top-k, top-p, and a draw from
// the per-position RNG (sampleUniform of src/engine/rng.ts, bit for bit). Twin: sampleToken.
// Not a sort: ranks are compared through a 64-bit key (logit, then lower id first), and every
// cut and the draw is a binary search over that key with workgroup reductions in a fixed order.
// Each row reads only its own logits, so its token never depends on the rest of the cohort.
// A row with any NaN or infinite logit gets NON_FINITE_LOGITS instead of a token.

override WORKGROUP_SIZE: u32 = 64u;  // a power of two

// NON_FINITE_LOGITS of src/engine/types.ts (-2) as the u32 the runner reads back.
const NON_FINITE_LOGITS: u32 = 0xfffffffeu;

struct Params {
  numRows: u32,
  vocab: u32,
  pad0: u32,
  pad1: u32,
}

struct SampleInfo {
  temperature: f32,
  topK: u32,    // 0 = no cut
  topP: f32,    // 1 = no cut
  seed: u32,
  pos: u32,     // sequence position of the token being sampled
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;          // [numRows, vocab]
@group(0) @binding(2) var<storage, read> infos: array<SampleInfo>;    // [numRows]
@group(0) @binding(3) var<storage, read_write> weights: array<f32>;   // [numRows, vocab] scratch
@group(0) @binding(4) var<storage, read_write> sampled: array<u32>;   // [numRows]

var<workgroup> red: array<vec2<f32>, WORKGROUP_SIZE>;
var<workgroup> redI: array<u32, WORKGROUP_SIZE>;
var<workgroup> redBad: array<u32, WORKGROUP_SIZE>;
var<private> rowBase: u32;

fn fmix32(x: u32) -> u32 {
  var h = x;
  h ^= h >> 16u;
  h *= 0x85ebca6bu;
  h ^= h >> 13u;
  h *= 0xc2b2ae35u;
  h ^= h >> 16u;
  return h;
}

fn sampleUniform(seed: u32, pos: u32) -> f32 {
  return f32(fmix32(seed ^ (pos * 0x9e3779b9u)) >> 8u) / 16777216.0;
}

// 1 when logit i is NaN or +-Inf. Read through its bits: WGSL lets compilers assume floats are
// finite, so a float comparison could be folded away.
fn nonFinite(i: u32) -> u32 {
  return select(0u, 1u, (bitcast<u32>(logits[rowBase + i]) & 0x7f800000u) == 0x7f800000u);
}

// Monotonic u32 image of a logit (+0 and -0 alike).
fn logitKey(i: u32) -> u32 {
  let b = bitcast<u32>(select(logits[rowBase + i], 0.0, logits[rowBase + i] == 0.0));
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// Rank key of id i is (logitKey(i), vocab - 1 - i): higher key = earlier rank.
fn atOrAbove(i: u32, hi: u32, lo: u32) -> bool {
  let k = logitKey(i);
  return k > hi || (k == hi && params.vocab - 1u - i >= lo);
}

// (count, mass) of the ids ranked at or above key (hi, lo) and at or above the cut; the count is
// exact in f32 for any vocab below 2^24. Fixed strided-then-tree order: deterministic.
fn above(lid: u32, hi: u32, lo: u32, cut: vec2<u32>) -> vec2<f32> {
  var sum = vec2<f32>(0.0);
  for (var i = lid; i < params.vocab; i += WORKGROUP_SIZE) {
    if (atOrAbove(i, hi, lo) && atOrAbove(i, cut.x, cut.y)) { sum += vec2<f32>(1.0, weights[rowBase + i]); }
  }
  red[lid] = sum;
  workgroupBarrier();
  // Every thread adds the partials in the same order: two barriers per pass instead of a tree's
  // log2(WORKGROUP_SIZE), which dominate on CPU-emulated GPUs.
  var total = vec2<f32>(0.0);
  for (var j = 0u; j < WORKGROUP_SIZE; j++) { total += red[j]; }
  workgroupBarrier();
  return total;
}

// The largest key (hi, lo) within the cut whose predicate holds (predicates only shrink as the
// key grows): kind 0: count >= need; kind 1: mass >= bound; kind 2: mass > bound.
fn search(lid: u32, kind: u32, need: f32, bound: f32, cut: vec2<u32>) -> vec2<u32> {
  let idBits = 32u - countLeadingZeros(max(params.vocab - 1u, 1u));
  var key = vec2<u32>(0u, 0u);
  for (var b = 0u; b < 32u + idBits; b++) {
    var probe = key;
    if (b < 32u) { probe.x |= 1u << (31u - b); } else { probe.y |= 1u << (31u + idBits - b); }
    let sums = above(lid, probe.x, probe.y, cut);
    var holds = sums.x >= need;
    if (kind == 1u) { holds = sums.y >= bound; }
    if (kind == 2u) { holds = sums.y > bound; }
    if (holds) { key = probe; }
  }
  return key;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  if (row >= params.numRows) { return; }
  rowBase = row * params.vocab;
  let info = infos[row];

  // argmax, lowest id on ties: per-thread best over ascending ids, then a tree in fixed order;
  // the same pass ORs together whether any logit is non-finite
  var best = min(lid, params.vocab - 1u);
  var bad = nonFinite(best);
  for (var i = lid + WORKGROUP_SIZE; i < params.vocab; i += WORKGROUP_SIZE) {
    if (logits[rowBase + i] > logits[rowBase + best]) { best = i; }
    bad |= nonFinite(i);
  }
  redI[lid] = min(best, params.vocab - 1u);
  redBad[lid] = bad;
  workgroupBarrier();
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
    if (lid < stride) {
      let a = redI[lid];
      let b = redI[lid + stride];
      let la = logits[rowBase + a];
      let lb = logits[rowBase + b];
      if (lb > la || (lb == la && b < a)) { redI[lid] = b; }
      redBad[lid] |= redBad[lid + stride];
    }
    workgroupBarrier();
  }
  let argmax = workgroupUniformLoad(&redI[0]);
  if (workgroupUniformLoad(&redBad[0]) != 0u) {
    if (lid == 0u) { sampled[row] = NON_FINITE_LOGITS; }
    return;
  }
  if (info.temperature <= 0.0 || info.topK == 1u) {
    if (lid == 0u) { sampled[row] = argmax; }
    return;
  }

  let maxLogit = logits[rowBase + argmax];
  for (var i = lid; i < params.vocab; i += WORKGROUP_SIZE) {
    weights[rowBase + i] = exp((logits[rowBase + i] - maxLogit) / info.temperature);
  }
  storageBarrier();
  workgroupBarrier();

  // Three cuts in turn, each a search that raises `cut` (ids ranked at or above it are kept):
  // top-k, top-p, then the draw, which leaves exactly one id. One call site keeps compiles small.
  let drawU = sampleUniform(info.seed, info.pos);
  var cut = vec2<u32>(0u, 0u);
  for (var phase = 0u; phase < 3u; phase++) {
    let kept = above(lid, 0u, 0u, cut);
    let total = kept.y;
    var kind = 0u;
    var need = 0.0;
    var bound = 0.0;
    var run = true;
    if (phase == 0u) {
      run = info.topK > 0u && info.topK < params.vocab;
      need = f32(info.topK);
    } else if (phase == 1u) {
      run = info.topP < 1.0;
      kind = 1u;
      bound = info.topP * total;
    } else {
      bound = drawU * total;
      kind = 2u;
      if (!(total > bound)) {
        // rounding left no id past the draw: take the last kept id
        kind = 0u;
        need = kept.x;
      }
    }
    if (run) { cut = search(lid, kind, need, bound, cut); }
  }
  if (lid == 0u) { sampled[row] = params.vocab - 1u - cut.y; }
}
