// Logit bias and repetition, frequency and presence penalties, in place on the logits of the
// sampled positions whose rows use them, before the sampler reads them. Twin: applyPenalties
// (src/reference/penalties.ts). Not the sampler: a pass of its own, dispatched only in steps where
// a row uses penalties or bias (a workgroup per such position), so other steps pay nothing and the
// sampler carries no per-entry loop. Every id a position changes is written by one invocation,
// from that position's own entries and drafts: nothing depends on the rest of the cohort.

const WORKGROUP_SIZE: u32 = 64u;

struct Params {
  numPenalized: u32,  // sampled positions with penalties or bias: one workgroup each
  vocab: u32,
  pad0: u32,
  pad1: u32,
}

// One sampled position of a penalized row.
struct PenaltyInfo {
  position: u32,      // the sampled position: its logits row
  first: u32,         // the row's first entry in entries
  numEntries: u32,
  firstDraft: u32,    // index in tokens of the row's first drafted token
  numDrafts: u32,     // drafts fed before this position: plain decode would have them in its output
  frequency: f32,
  presence: f32,
  repetition: f32,
  invRepetition: f32, // f32 1 / repetition from the host: the GPU never divides
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

// One token the row's logits change at: src/engine/penalties.ts penaltyEntries, ascending by id.
struct Entry {
  id: u32,
  count: u32,     // occurrences in the output before this step's drafts
  inPrompt: u32,  // 1 when the prompt holds it
  bias: f32,      // logit_bias, 0 without
}

// One token of the step (step-meta's layout; only id is read here).
struct TokenInfo {
  id: u32,
  pos: u32,
  row: u32,
  blockTableOffset: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;     // [sampled positions, vocab]
@group(0) @binding(2) var<storage, read> tokens: array<TokenInfo>;    // [numTokens] the step's tokens
@group(0) @binding(3) var<storage, read> infos: array<PenaltyInfo>;   // [numPenalized]
@group(0) @binding(4) var<storage, read> entries: array<Entry>;       // [entries of every penalized row]

// Occurrences of id among the drafts fed before this position.
fn inDrafts(info: PenaltyInfo, id: u32) -> u32 {
  var n = 0u;
  for (var d = 0u; d < info.numDrafts; d++) {
    if (tokens[info.firstDraft + d].id == id) { n++; }
  }
  return n;
}

// penalizedLogit of the twin: bias, then repetition (prompt or output), frequency, presence.
fn penalize(info: PenaltyInfo, id: u32, count: u32, inPrompt: bool, bias: f32) {
  let at = info.position * params.vocab + id;
  var l = logits[at] + bias;
  if (inPrompt || count > 0u) { l = select(l * info.repetition, l * info.invRepetition, l > 0.0); }
  l = l - f32(count) * info.frequency;
  if (count > 0u) { l = l - info.presence; }
  logits[at] = l;
}

// Whether the row's entries hold id (binary search: they ascend by id).
fn held(info: PenaltyInfo, id: u32) -> bool {
  var lo = info.first;
  var hi = info.first + info.numEntries;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (entries[mid].id < id) { lo = mid + 1u; } else { hi = mid; }
  }
  return lo < info.first + info.numEntries && entries[lo].id == id;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (wid.x >= params.numPenalized) { return; }
  let info = infos[wid.x];
  for (var e = lid; e < info.numEntries; e += WORKGROUP_SIZE) {
    let entry = entries[info.first + e];
    penalize(info, entry.id, entry.count + inDrafts(info, entry.id), entry.inPrompt != 0u, entry.bias);
  }
  // drafted ids no entry holds, each once (by its first draft)
  if (lid < info.numDrafts) {
    let id = tokens[info.firstDraft + lid].id;
    var first = !held(info, id);
    for (var d = 0u; d < lid; d++) {
      if (tokens[info.firstDraft + d].id == id) { first = false; }
    }
    if (first) { penalize(info, id, inDrafts(info, id), false, 0.0); }
  }
}
