// Sampling in passes over contiguous vocabulary chunks (greedy, temperature, top-k, top-p, the
// per-position draw of src/engine/rng.ts). Twin: sampleToken. Not a sort of the vocabulary.
// `main` runs once per level with a grid of (chunk, sampling row); `finish` once per row:
//  level 0: each chunk's argmax (lowest id on ties) and non-finite flag, and for rows that keep at
//    most CAP ids by rank, a count histogram of the top 11 bits of the rank key;
//  levels 1..numLevels-1: the radix select narrows the key of the kept set's last id one digit
//    more (11, 10 bits of the logit key, then the id's digits), counting only ids that still tie
//    on the digits chosen so far; a row whose cut falls between two digit bins is done early;
//  level numLevels: gathers the kept ids (exactly min(topK, vocab)) into the row's scratch;
//  finish: merges the chunks' argmax in chunk order; sorts the kept ids by rank in workgroup
//    memory, weights them, and walks them in rank order on one invocation for top-p and the draw.
// Rows keeping more than CAP ids fall back, in `finish`, to a bisection over the rank key (about
// 50 vocabulary passes per active cut) whose sums run over SAMPLE_FALLBACK_LANES strided lanes.
// Counts are integers (atomics are exact in any order); every f32 sum runs in a fixed order on
// one row's data: a row's token never depends on the cohort or on the kernel setting.
// Rows asking for logprobs get them in finish, after the draw, from the logits it drew from
// (penalties.wgsl has already written bias and penalties into them), scaled by the row's
// 1/temperature (1 for greedy rows), over the whole vocabulary: twin sampledLogprobs.

override WORKGROUP_SIZE: u32 = 256u;  // main's invocations: a power of two from 64 to 2048
const FINISH_SIZE: u32 = 64u;         // finish's invocations and the fallback's lanes, in every setting
const CAP: u32 = 1024u;               // most ids kept by rank on the gathered path (a power of two)
const BINS: u32 = 2048u;              // digit bins of one level
const MAX_LEVELS: u32 = 5u;           // histogram levels: 3 of the logit key, up to 2 of the id
const HIST_WORDS: u32 = 10244u;       // per row: MAX_LEVELS * BINS counts, the gather counter, pad
const LEVEL_WORDS: u32 = 8u;          // one LevelState
const MAX_TOP_LOGPROBS: u32 = 20u;     // src/engine/penalties.ts MAX_TOP_LOGPROBS
const LOGPROB_WORDS: u32 = 41u;        // one logprob slot: the token's, then (id, logprob) per top id

// NON_FINITE_LOGITS of src/engine/types.ts (-2) as the u32 the runner reads back.
const NON_FINITE_LOGITS: u32 = 0xfffffffeu;

struct Params {
  numRows: u32,
  vocab: u32,
  chunkSize: u32,
  numChunks: u32,
  level: u32,      // main: the pass (0..numLevels); finish: unused
  numLevels: u32,  // 4 for a vocab of at most 2048 ids, else 5
  pad0: u32,
  pad1: u32,
}

struct SampleInfo {
  temperature: f32,
  topK: u32,           // 0 = no cut
  topP: f32,           // 1 = no cut
  seed: u32,
  pos: u32,            // sequence position of the token being sampled
  invTemperature: f32, // inverseTemperature of src/engine/sample-numerics.ts; 0 = greedy
  logprobs: u32,       // 0: none; else 1 + the top ids wanted (0..MAX_TOP_LOGPROBS)
  logprobSlot: u32,    // the position's slot in logprobOut (slots only for positions that ask)
}

// The radix select's progress: the kept set's last rank key is known on the bits of the masks.
struct LevelState {
  need: u32,       // ids still to keep among those matching the prefix
  done: u32,       // 1: every id matching the prefix is kept, later digits do not matter
  keyMask: u32,
  keyPrefix: u32,
  ridMask: u32,
  ridPrefix: u32,
  pad0: u32,
  pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;          // [numRows, vocab]
@group(0) @binding(2) var<storage, read> infos: array<SampleInfo>;    // [numRows]
@group(0) @binding(3) var<storage, read_write> weights: array<f32>;   // [numRows, vocab] the fallback's
// [numRows, stateWords]: (argmax, non-finite) per chunk, LevelState per level, CAP gathered ids
@group(0) @binding(4) var<storage, read_write> state: array<u32>;
// [numRows, HIST_WORDS], all zero between steps: finish zeroes what the levels counted
@group(0) @binding(5) var<storage, read_write> hist: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> sampled: array<u32>;   // [numRows]
// [logprob slots, LOGPROB_WORDS]: the sampled token's logprob, then per top id its id (bits) and logprob
@group(0) @binding(7) var<storage, read_write> logprobOut: array<f32>;

var<workgroup> wHist: array<atomic<u32>, BINS>;
var<workgroup> wPart: array<u32, WORKGROUP_SIZE>;
var<workgroup> wBest: array<u32, WORKGROUP_SIZE>;
var<workgroup> wBad: array<u32, WORKGROUP_SIZE>;
var<workgroup> wState: LevelState;
var<workgroup> wPick: vec2<u32>;
var<workgroup> wToken: u32;
var<workgroup> sKey: array<u32, CAP>;
var<workgroup> sId: array<u32, CAP>;
var<workgroup> sW: array<f32, CAP>;
var<workgroup> red: array<vec2<f32>, FINISH_SIZE>;
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

// exp(x) for x <= 0 from correctly rounded +, -, * and exact power-of-two scaling only, so the twin
// (expWeight) follows it bit for bit; WGSL's exp has no exact rounding. 0 below -80 (no subnormals).
fn expWeight(x: f32) -> f32 {
  if (x < -80.0) { return 0.0; }
  let n = floor(x * 1.44269504 + 0.5);
  let r = (x - n * 0.693359375) - n * -2.12194440e-4;
  var p = 1.98412698e-4;  // 1/7! .. 1/0!, Horner
  p = p * r + 1.38888889e-3;
  p = p * r + 8.33333333e-3;
  p = p * r + 4.16666667e-2;
  p = p * r + 1.66666667e-1;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return p * bitcast<f32>(u32(i32(n) + 127) << 23u);
}

// 1 when the logit is NaN or +-Inf. Read through its bits: WGSL lets compilers assume floats are
// finite, so a float comparison could be folded away.
fn nonFinite(i: u32) -> u32 {
  return select(0u, 1u, (bitcast<u32>(logits[rowBase + i]) & 0x7f800000u) == 0x7f800000u);
}

// Monotonic u32 image of a logit (+0 and -0 alike). An id's rank key is (logitKey, rid), rid =
// vocab - 1 - id: a higher key ranks first, so equal logits rank the lower id first.
fn logitKey(i: u32) -> u32 {
  let b = bitcast<u32>(select(logits[rowBase + i], 0.0, logits[rowBase + i] == 0.0));
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

fn greedy(info: SampleInfo) -> bool {
  return !(info.invTemperature > 0.0) || info.topK == 1u;
}

// Ids kept by rank before top-p: min(topK, vocab), all with topK 0.
fn keptByRank(info: SampleInfo) -> u32 {
  return select(min(info.topK, params.vocab), params.vocab, info.topK == 0u);
}

fn gathered(info: SampleInfo) -> bool {
  return !greedy(info) && keptByRank(info) <= CAP;
}

fn digitOf(level: u32, key: u32, rid: u32) -> u32 {
  switch level {
    case 0u: { return key >> 21u; }
    case 1u: { return (key >> 10u) & 0x7ffu; }
    case 2u: { return key & 0x3ffu; }
    case 3u: { return select(rid, rid >> 11u, params.numLevels == 5u); }
    default: { return rid & 0x7ffu; }
  }
}

// s with level's digit d fixed in its masks.
fn withDigit(s: LevelState, level: u32, d: u32) -> LevelState {
  var t = s;
  switch level {
    case 0u: { t.keyMask |= 0xffe00000u; t.keyPrefix |= d << 21u; }
    case 1u: { t.keyMask |= 0x001ffc00u; t.keyPrefix |= d << 10u; }
    case 2u: { t.keyMask |= 0x3ffu; t.keyPrefix |= d; }
    case 3u: {
      if (params.numLevels == 5u) { t.ridMask = 0xfffff800u; t.ridPrefix = d << 11u; } else { t.ridMask = 0xffffffffu; t.ridPrefix = d; }
    }
    default: { t.ridMask = 0xffffffffu; t.ridPrefix |= d; }
  }
  return t;
}

fn matches(s: LevelState, key: u32, rid: u32) -> bool {
  return (key & s.keyMask) == s.keyPrefix && (rid & s.ridMask) == s.ridPrefix;
}

// At or above the cut on the bits known: lexicographic on (key, rid) under the masks.
fn kept(s: LevelState, key: u32, rid: u32) -> bool {
  let k = key & s.keyMask;
  return k > s.keyPrefix || (k == s.keyPrefix && (rid & s.ridMask) >= s.ridPrefix);
}

// The next state from level's histogram: the digit whose bin holds the need-th id counting down
// from the top bin. Each invocation sums a run of bins; one walks the partials and then its run.
fn selectDigit(s: LevelState, level: u32, row: u32, lid: u32) -> LevelState {
  let per = BINS / WORKGROUP_SIZE;
  let hb = row * HIST_WORDS + level * BINS;
  var sum = 0u;
  for (var j = 0u; j < per; j++) { sum += atomicLoad(&hist[hb + BINS - 1u - (lid * per + j)]); }
  wPart[lid] = sum;
  workgroupBarrier();
  if (lid == 0u) {
    var above = 0u;
    var t = 0u;
    while (t + 1u < WORKGROUP_SIZE && above + wPart[t] < s.need) { above += wPart[t]; t++; }
    var d = BINS - 1u - t * per;
    var count = atomicLoad(&hist[hb + d]);
    for (var j = 1u; j < per && above + count < s.need; j++) {
      above += count;
      d--;
      count = atomicLoad(&hist[hb + d]);
    }
    var next = withDigit(s, level, d);
    next.need = s.need - above;
    next.done = select(0u, 1u, next.need == count);
    wState = next;
  }
  return workgroupUniformLoad(&wState);
}

fn stateBase(row: u32) -> u32 {
  return row * (2u * params.numChunks + LEVEL_WORDS * (MAX_LEVELS + 1u) + CAP);
}

fn levelAt(row: u32, level: u32) -> u32 {
  return stateBase(row) + 2u * params.numChunks + LEVEL_WORDS * level;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let chunk = wid.x;
  let row = wid.y;
  if (row >= params.numRows) { return; }
  rowBase = row * params.vocab;
  let info = infos[row];
  let begin = chunk * params.chunkSize;
  let end = min(begin + params.chunkSize, params.vocab);
  let level = params.level;

  if (level == 0u) {
    // the chunk's argmax, lowest id on ties (per invocation over ascending ids, then a tree in a
    // fixed order), and whether any of its logits is non-finite
    var best = min(begin + lid, end - 1u);
    var bad = nonFinite(best);
    for (var i = begin + lid + WORKGROUP_SIZE; i < end; i += WORKGROUP_SIZE) {
      if (logits[rowBase + i] > logits[rowBase + best]) { best = i; }
      bad |= nonFinite(i);
    }
    wBest[lid] = best;
    wBad[lid] = bad;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride /= 2u) {
      if (lid < stride) {
        let a = wBest[lid];
        let b = wBest[lid + stride];
        let la = logits[rowBase + a];
        let lb = logits[rowBase + b];
        if (lb > la || (lb == la && b < a)) { wBest[lid] = b; }
        wBad[lid] |= wBad[lid + stride];
      }
      workgroupBarrier();
    }
    if (lid == 0u) {
      state[stateBase(row) + 2u * chunk] = wBest[0];
      state[stateBase(row) + 2u * chunk + 1u] = wBad[0];
    }
  }
  if (!gathered(info)) { return; }

  // the state before this level: the initial one, or the last level's advanced by its histogram
  var s = LevelState(keptByRank(info), 0u, 0u, 0u, 0u, 0u, 0u, 0u);
  if (level > 0u) {
    if (lid == 0u && level > 1u) {
      let o = levelAt(row, level - 1u);
      wState = LevelState(state[o], state[o + 1u], state[o + 2u], state[o + 3u], state[o + 4u], state[o + 5u], 0u, 0u);
    }
    if (level > 1u) { s = workgroupUniformLoad(&wState); }
    workgroupBarrier();
    if (s.done == 0u) { s = selectDigit(s, level - 1u, row, lid); }
    if (chunk == 0u && lid == 0u && level < params.numLevels) {
      let o = levelAt(row, level);
      state[o] = s.need;
      state[o + 1u] = s.done;
      state[o + 2u] = s.keyMask;
      state[o + 3u] = s.keyPrefix;
      state[o + 4u] = s.ridMask;
      state[o + 5u] = s.ridPrefix;
    }
  }

  if (level == params.numLevels) {
    // gather: every kept id into the row's list, in no particular order (finish sorts them)
    let counter = row * HIST_WORDS + MAX_LEVELS * BINS;
    let list = stateBase(row) + 2u * params.numChunks + LEVEL_WORDS * (MAX_LEVELS + 1u);
    for (var i = begin + lid; i < end; i += WORKGROUP_SIZE) {
      if (kept(s, logitKey(i), params.vocab - 1u - i)) {
        let slot = atomicAdd(&hist[counter], 1u);
        if (slot < CAP) { state[list + slot] = i; }
      }
    }
    return;
  }
  if (s.done != 0u) { return; }

  // this level's counts over the chunk's ids still matching the prefix, merged into the row's
  for (var b = lid; b < BINS; b += WORKGROUP_SIZE) { atomicStore(&wHist[b], 0u); }
  workgroupBarrier();
  for (var i = begin + lid; i < end; i += WORKGROUP_SIZE) {
    let key = logitKey(i);
    let rid = params.vocab - 1u - i;
    if (matches(s, key, rid)) { atomicAdd(&wHist[digitOf(level, key, rid)], 1u); }
  }
  workgroupBarrier();
  let hb = row * HIST_WORDS + level * BINS;
  for (var b = lid; b < BINS; b += WORKGROUP_SIZE) {
    let c = atomicLoad(&wHist[b]);
    if (c != 0u) { atomicAdd(&hist[hb + b], c); }
  }
}

// --- finish: one workgroup of FINISH_SIZE per row

// a's rank before b's: higher key, then lower id (the padding's (0, 0xffffffff) ranks last)
fn ranksBefore(a: u32, b: u32) -> bool {
  return sKey[a] > sKey[b] || (sKey[a] == sKey[b] && sId[a] < sId[b]);
}

// The gathered path: the n kept ids sorted by rank (bitonic, in workgroup memory), weighted, then
// top-p and the draw walked in rank order by one invocation, f32 sums from rank 0 up.
fn drawGathered(row: u32, lid: u32, info: SampleInfo, n: u32, maxLogit: f32) -> u32 {
  var n2 = 1u;
  while (n2 < n) { n2 *= 2u; }
  let list = stateBase(row) + 2u * params.numChunks + LEVEL_WORDS * (MAX_LEVELS + 1u);
  for (var r = lid; r < n2; r += FINISH_SIZE) {
    if (r < n) {
      sId[r] = state[list + r];
      sKey[r] = logitKey(sId[r]);
    } else {
      sId[r] = 0xffffffffu;
      sKey[r] = 0u;
    }
  }
  workgroupBarrier();
  for (var size = 2u; size <= n2; size *= 2u) {
    for (var stride = size / 2u; stride > 0u; stride /= 2u) {
      for (var t = lid; t < n2 / 2u; t += FINISH_SIZE) {
        let i = 2u * stride * (t / stride) + t % stride;
        let j = i + stride;
        let up = (i & size) == 0u;
        if (select(ranksBefore(i, j), ranksBefore(j, i), up)) {
          let k = sKey[i];
          sKey[i] = sKey[j];
          sKey[j] = k;
          let d = sId[i];
          sId[i] = sId[j];
          sId[j] = d;
        }
      }
      workgroupBarrier();
    }
  }
  for (var r = lid; r < n; r += FINISH_SIZE) { sW[r] = expWeight((logits[rowBase + sId[r]] - maxLogit) * info.invTemperature); }
  workgroupBarrier();
  if (lid != 0u) { return 0u; }
  var total = 0.0;
  for (var r = 0u; r < n; r++) { total += sW[r]; }
  var numKept = n;
  if (info.topP < 1.0) {
    let threshold = info.topP * total;
    var running = 0.0;
    var r = 0u;
    for (; r < n; r++) {
      running += sW[r];
      if (running >= threshold) { break; }
    }
    numKept = min(r + 1u, n);
    total = running;
  }
  let goal = sampleUniform(info.seed, info.pos) * total;
  var running = 0.0;
  for (var r = 0u; r < numKept; r++) {
    running += sW[r];
    if (running > goal) { return sId[r]; }
  }
  return sId[numKept - 1u];
}

// Rank key of id i is (logitKey(i), vocab - 1 - i): higher key = earlier rank.
fn atOrAbove(i: u32, hi: u32, lo: u32) -> bool {
  let k = logitKey(i);
  return k > hi || (k == hi && params.vocab - 1u - i >= lo);
}

// (count, mass) of the ids ranked at or above key (hi, lo) and at or above the cut: lane j sums
// ids j, j + FINISH_SIZE, ... in order, then the lanes in order; the count is exact below 2^24.
fn above(lid: u32, hi: u32, lo: u32, cut: vec2<u32>) -> vec2<f32> {
  var sum = vec2<f32>(0.0);
  for (var i = lid; i < params.vocab; i += FINISH_SIZE) {
    if (atOrAbove(i, hi, lo) && atOrAbove(i, cut.x, cut.y)) { sum += vec2<f32>(1.0, weights[rowBase + i]); }
  }
  red[lid] = sum;
  workgroupBarrier();
  // every invocation adds the partials in the same order: two barriers, not a tree's log2 lanes
  var total = vec2<f32>(0.0);
  for (var j = 0u; j < FINISH_SIZE; j++) { total += red[j]; }
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

// The fallback for rows keeping more than CAP ids by rank: three cuts in turn, each a bisection
// that raises `cut` (ids ranked at or above it are kept): top-k, top-p, then the draw, which leaves
// exactly one id. One call site keeps compiles small.
fn drawBisected(lid: u32, info: SampleInfo, maxLogit: f32) -> u32 {
  for (var i = lid; i < params.vocab; i += FINISH_SIZE) {
    weights[rowBase + i] = expWeight((logits[rowBase + i] - maxLogit) * info.invTemperature);
  }
  storageBarrier();
  workgroupBarrier();
  let drawU = sampleUniform(info.seed, info.pos);
  var cut = vec2<u32>(0u, 0u);
  for (var phase = 0u; phase < 3u; phase++) {
    let keptSums = above(lid, 0u, 0u, cut);
    let total = keptSums.y;
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
        need = keptSums.x;
      }
    }
    if (run) { cut = search(lid, kind, need, bound, cut); }
  }
  return params.vocab - 1u - cut.y;
}

// The best id ranked strictly after `after` (0xffffffff: none yet): every lane over its strided
// ids, then the lanes in order; ranks are a total order, so any order would pick the same id.
fn nextRanked(lid: u32, after: u32) -> u32 {
  var best = 0xffffffffu;
  let haveAfter = after != 0xffffffffu;
  for (var i = lid; i < params.vocab; i += FINISH_SIZE) {
    if (haveAfter && !rankedBefore(after, i)) { continue; }
    if (best == 0xffffffffu || rankedBefore(i, best)) { best = i; }
  }
  wBest[lid] = best;
  workgroupBarrier();
  var pick = 0xffffffffu;
  for (var j = 0u; j < FINISH_SIZE; j++) {
    let b = wBest[j];
    if (b != 0xffffffffu && (pick == 0xffffffffu || rankedBefore(b, pick))) { pick = b; }
  }
  workgroupBarrier();
  return pick;
}

// a's rank before b's among ids (not the sort's scratch): higher key, then lower id.
fn rankedBefore(a: u32, b: u32) -> bool {
  let ka = logitKey(a);
  let kb = logitKey(b);
  return ka > kb || (ka == kb && a < b);
}

// The position's logprobs into its slot: z_i = (logit_i - max) * scale; ln of the sum of
// expWeight(z_i) over FINISH_SIZE strided lanes then the lanes in order; log p_i = z_i - ln total.
// Then the top ids, one vocabulary pass each (rows that ask only; at most MAX_TOP_LOGPROBS).
fn writeLogprobs(lid: u32, info: SampleInfo, token: u32, maxLogit: f32) {
  let scale = select(1.0, info.invTemperature, info.invTemperature > 0.0);
  var mass = 0.0;
  for (var i = lid; i < params.vocab; i += FINISH_SIZE) { mass += expWeight((logits[rowBase + i] - maxLogit) * scale); }
  red[lid] = vec2<f32>(mass, 0.0);
  workgroupBarrier();
  var total = 0.0;
  for (var j = 0u; j < FINISH_SIZE; j++) { total += red[j].x; }
  workgroupBarrier();
  let lse = log(total);
  let slot = info.logprobSlot * LOGPROB_WORDS;
  if (lid == 0u) { logprobOut[slot] = (logits[rowBase + token] - maxLogit) * scale - lse; }
  let numTop = min(info.logprobs - 1u, min(MAX_TOP_LOGPROBS, params.vocab));
  var after = 0xffffffffu;
  for (var r = 0u; r < numTop; r++) {
    after = nextRanked(lid, after);
    if (lid == 0u) {
      logprobOut[slot + 1u + 2u * r] = bitcast<f32>(after);
      logprobOut[slot + 2u + 2u * r] = (logits[rowBase + after] - maxLogit) * scale - lse;
    }
  }
}

@compute @workgroup_size(FINISH_SIZE)
fn finish(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let row = wid.x;
  if (row >= params.numRows) { return; }
  rowBase = row * params.vocab;
  let info = infos[row];

  // the chunks' argmaxes merged in chunk order (a later chunk wins only when strictly larger)
  if (lid == 0u) {
    var best = state[stateBase(row)];
    var bad = state[stateBase(row) + 1u];
    for (var c = 1u; c < params.numChunks; c++) {
      let b = state[stateBase(row) + 2u * c];
      if (logits[rowBase + b] > logits[rowBase + best]) { best = b; }
      bad |= state[stateBase(row) + 2u * c + 1u];
    }
    wPick = vec2<u32>(best, bad);
  }
  let pick = workgroupUniformLoad(&wPick);
  var token = pick.x;
  if (pick.y != 0u) {
    token = NON_FINITE_LOGITS;
  } else if (!greedy(info)) {
    let maxLogit = logits[rowBase + pick.x];
    if (gathered(info)) {
      token = drawGathered(row, lid, info, keptByRank(info), maxLogit);
    } else {
      token = drawBisected(lid, info, maxLogit);
    }
  }
  if (lid == 0u) {
    sampled[row] = token;
    wToken = token;
  }
  token = workgroupUniformLoad(&wToken);
  if (info.logprobs != 0u && token != NON_FINITE_LOGITS) { writeLogprobs(lid, info, token, logits[rowBase + pick.x]); }
  // leave the row's counts zero for the next step (only gathered rows counted)
  if (gathered(info)) {
    for (var i = lid; i <= MAX_LEVELS * BINS; i += FINISH_SIZE) { atomicStore(&hist[row * HIST_WORDS + i], 0u); }
  }
}
