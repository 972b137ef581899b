// KV write: copies each token's K and V into its slot of one layer's paged cache, slot =
// blockTables[row's offset + pos / blockSize] * blockSize + pos % blockSize. Twin: reference kvWrite.
// Not an allocator: block ids come from the engine's block tables; block 0 is never written.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  numTokens: u32,
  kvDim: u32,      // numKvHeads * headDim
  blockSize: u32,
  vOffset: u32,    // floats from the layer's K cache to its V cache (numBlocks * blockSize * kvDim)
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
@group(0) @binding(3) var<storage, read> k: array<f32>;              // [numTokens, kvDim]
@group(0) @binding(4) var<storage, read> v: array<f32>;              // [numTokens, kvDim]
// One layer: K [numBlocks, blockSize, kvDim] then V at vOffset, same shape.
@group(0) @binding(5) var<storage, read_write> kv: array<f32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let e = gid.x;
  let t = gid.y;
  if (e >= params.kvDim || t >= params.numTokens) { return; }
  let token = tokens[t];
  let bs = params.blockSize;
  let slot = blockTables[token.blockTableOffset + token.pos / bs] * bs + token.pos % bs;
  kv[slot * params.kvDim + e] = k[t * params.kvDim + e];
  kv[params.vOffset + slot * params.kvDim + e] = v[t * params.kvDim + e];
}
