// An output constraint's bitmask applied to the logits of the constrained sampled positions:
// every token whose bit is clear gets MASKED_LOGIT, before penalties and the sampler read them.
// Twin: applyTokenMask (src/reference/token-mask.ts). Not which tokens are allowed (the engine's
// grammar matchers fill the masks on the CPU). A pass of its own, dispatched only in steps where a
// row is constrained, over those positions only: other steps and rows pay nothing. Each logit is
// written by one invocation from its own position's mask word: nothing depends on the cohort.

// Lanes along the vocabulary: lane i of a workgroup owns token id wid.x * WORKGROUP_SIZE + i, so
// adjacent lanes write adjacent logits and 32 of them read the same mask word (one load shared).
override WORKGROUP_SIZE: u32 = 256u;

// src/engine/constraints.ts MASKED_LOGIT: finite, so the sampler's non-finite check still means a
// model fault, and exp() of it after any temperature is exactly 0.
const MASKED_LOGIT: f32 = -1e30;

struct Params {
  numMasked: u32,  // constrained sampled positions: grid y
  vocab: u32,
  words: u32,      // u32 words of one mask row: ceil(vocab / 32)
  pad0: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> logits: array<f32>;  // [sampled positions, vocab]
@group(0) @binding(2) var<storage, read> positions: array<u32>;     // [numMasked] each one's logits row
@group(0) @binding(3) var<storage, read> masks: array<u32>;         // [numMasked, words] bit set = allowed

// grid: (ceil(vocab / WORKGROUP_SIZE), numMasked)
@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let m = wid.y;
  let id = wid.x * WORKGROUP_SIZE + lid;
  if (m >= params.numMasked || id >= params.vocab) { return; }
  let word = masks[m * params.words + (id >> 5u)];
  if (((word >> (id & 31u)) & 1u) == 0u) {
    logits[positions[m] * params.vocab + id] = MASKED_LOGIT;
  }
}
