// llama.cpp's rotary row order for llama Q/K weights (convert_hf_to_gguf's `permute`) and its
// inverse. Works on stored rows of any dtype: a row is whole blocks. Not RoPE itself.

/**
 * Within each head of headDim rows, HF keeps the two rotary halves apart (rows i and
 * i + headDim/2 pair up); GGUF interleaves them (rows 2i and 2i+1). gguf row h*hd + 2i + j
 * holds HF row h*hd + j*hd/2 + i.
 */
function reorderRows(data: Uint8Array, numRows: number, headDim: number, toGguf: boolean): Uint8Array {
  if (numRows % headDim !== 0 || headDim % 2 !== 0) throw new Error(`cannot permute ${numRows} rows in heads of ${headDim}`);
  const bytesPerRow = data.length / numRows;
  const out = new Uint8Array(data.length);
  const half = headDim / 2;
  for (let h = 0; h < numRows / headDim; h++) {
    for (let i = 0; i < half; i++) {
      for (let j = 0; j < 2; j++) {
        const ggufRow = h * headDim + 2 * i + j;
        const hfRow = h * headDim + j * half + i;
        const [from, to] = toGguf ? [hfRow, ggufRow] : [ggufRow, hfRow];
        out.set(data.subarray(from * bytesPerRow, (from + 1) * bytesPerRow), to * bytesPerRow);
      }
    }
  }
  return out;
}

/** HF row order -> llama.cpp's interleaved order ([numRows, cols] stored rows). */
export function permuteRowsToGguf(data: Uint8Array, numRows: number, headDim: number): Uint8Array {
  return reorderRows(data, numRows, headDim, true);
}

/** llama.cpp's interleaved order -> HF row order. */
export function unpermuteRowsFromGguf(data: Uint8Array, numRows: number, headDim: number): Uint8Array {
  return reorderRows(data, numRows, headDim, false);
}
