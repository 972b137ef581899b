// Embedding gather: out[t, :] = table[tokens[t].id, :] * scale, decoding the table's stored dtype in
// place. Not a matmul: tied lm_head reads the same buffer through matmul.wgsl. Twin: embeddingGather.

override WORKGROUP_SIZE: u32 = 64u;
// Stored dtype of the table, codes shared with matmul.wgsl: 0 f32, 1 f16, 2 bf16, 3 q8_0,
// 4 q4_0, 5 q4_K, 6 q6_K.
override DTYPE: u32 = 0u;

struct Params {
  numTokens: u32,
  hidden: u32,  // table cols
  scale: f32,   // ModelConfig.embedScale (gemma's sqrt(hidden), else 1: v * 1 is v exactly)
  rows: u32,    // table rows (the vocabulary): where a repacked q8_0/q4_0 table's scale plane starts
}

// One token of the step; shared by embedding, rope, kv_write and paged_attention.
struct TokenInfo {
  id: u32,
  pos: u32,               // position in its row's sequence
  row: u32,               // index of its row in the step
  blockTableOffset: u32,  // first entry of its row's block table in blockTables
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<TokenInfo>;  // [numTokens]
@group(0) @binding(2) var<storage, read> table: array<u32>;         // [vocab, hidden] stored bytes (q8_0/q4_0 repacked: src/gpu/repack.ts)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;     // [numTokens, hidden]

fn byteAt(o: u32) -> u32 {
  return (table[o >> 2u] >> ((o & 3u) * 8u)) & 0xffu;
}

fn int8At(o: u32) -> i32 {
  return bitcast<i32>(byteAt(o) << 24u) >> 24u;
}

fn halfAt(o: u32) -> f32 {  // o even
  let pair = unpack2x16float(table[o >> 2u]);
  return select(pair.x, pair.y, (o & 2u) != 0u);
}

// ggml's get_scale_min_k4: 6-bit scale and min j of the 12 bytes at s.
fn scaleMinK4(s: u32, j: u32) -> vec2<u32> {
  if (j < 4u) {
    return vec2<u32>(byteAt(s + j) & 63u, byteAt(s + j + 4u) & 63u);
  }
  return vec2<u32>((byteAt(s + j + 4u) & 0xfu) | ((byteAt(s + j - 4u) >> 6u) << 4u),
                   (byteAt(s + j + 4u) >> 4u) | ((byteAt(s + j) >> 6u) << 4u));
}

// Element j of table row `row`, with the same products and rounding order as reference dequant.
fn decode(row: u32, j: u32) -> f32 {
  let h = params.hidden;
  switch DTYPE {
    case 0u: { return bitcast<f32>(table[row * h + j]); }
    case 1u: { return halfAt((row * h + j) * 2u); }
    case 2u: {
      let o = (row * h + j) * 2u;
      return bitcast<f32>(((table[o >> 2u] >> ((o & 2u) * 8u)) & 0xffffu) << 16u);
    }
    // q8_0 / q4_0 repacked: the quant plane (32 or 16 bytes a block), then the blocks' f16 scales
    case 3u: {
      let d = halfAt(params.rows * h + (row * (h / 32u) + j / 32u) * 2u);
      return f32(int8At(row * h + j)) * d;
    }
    case 4u: {
      let d = halfAt(params.rows * (h / 2u) + (row * (h / 32u) + j / 32u) * 2u);
      let jj = j % 32u;
      let q = byteAt(row * (h / 2u) + (j / 32u) * 16u + jj % 16u);
      let nibble = select(q >> 4u, q & 0xfu, jj < 16u);
      return f32(i32(nibble) - 8) * d;
    }
    case 5u: {
      let o = row * (h / 256u) * 144u + (j / 256u) * 144u;
      let jj = j % 256u;
      let g = jj / 64u;
      let upper = (jj % 64u) / 32u;
      let sm = scaleMinK4(o + 4u, 2u * g + upper);
      let q = byteAt(o + 16u + 32u * g + jj % 32u);
      let nibble = select(q & 0xfu, q >> 4u, upper == 1u);
      return halfAt(o) * f32(sm.x) * f32(nibble) - halfAt(o + 2u) * f32(sm.y);
    }
    default: {
      let o = row * (h / 256u) * 210u + (j / 256u) * 210u;
      let jj = j % 256u;
      let half = jj / 128u;
      let quarter = (jj % 128u) / 32u;
      let l = jj % 32u;
      let ql = byteAt(o + 64u * half + 32u * (quarter & 1u) + l);
      let low = select(ql & 0xfu, ql >> 4u, quarter >= 2u);
      let high = (byteAt(o + 128u + 32u * half + l) >> (2u * quarter)) & 3u;
      let q = i32(low | (high << 4u)) - 32;
      let sc = int8At(o + 192u + 8u * half + l / 16u + 2u * quarter);
      return halfAt(o + 208u) * f32(sc) * f32(q);
    }
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j = gid.x;
  let t = gid.y;
  if (j >= params.hidden || t >= params.numTokens) { return; }
  // one f32 product, as the twin's Math.fround(v * scale)
  out[t * params.hidden + j] = decode(tokens[t].id, j) * params.scale;
}
