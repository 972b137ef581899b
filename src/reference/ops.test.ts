// Unit tests of the CPU kernel twins against naive textbook definitions.
// Not the forward pass (cpu-runner.test.ts) and not llama.cpp parity (llama-cpp/oracle.test.ts).
import { describe, expect, it } from 'vitest';
import { dequantize } from './dequant';
import {
  embeddingGather,
  kvWrite,
  matmul,
  matmulQuant,
  pagedAttention,
  residualAdd,
  rmsNorm,
  rope,
  slotMapping,
  swiglu,
  type Matrix,
} from './ops';
import { syntheticModelDesc, TINY_SYNTH_DIMS } from '../model/testing/synthetic-model-fixtures';
import { fmix32 } from '../engine/rng';
import { ropeInverseFrequencies } from '../model/rope';
import { encodeTensor } from '../../tools/models/quantize';
import type { TensorDesc } from '../model/desc';

function rand(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => fmix32((seed * 7919 + i * 104729) >>> 0) / 2 ** 31 - 1);
}

describe('embeddingGather', () => {
  it('copies the embedding row of each token', () => {
    const table: Matrix = { rows: 3, cols: 2, data: new Float32Array([0, 1, 10, 11, 20, 21]) };
    const out = new Float32Array(6);
    embeddingGather(table, new Int32Array([2, 0, 2]), out);
    expect(Array.from(out)).toEqual([20, 21, 0, 1, 20, 21]);
    expect(() => embeddingGather(table, new Int32Array([3]), out)).toThrow(/outside vocab/);
  });
});

describe('rmsNorm', () => {
  it('divides by the root mean square and scales by the weight, per vector', () => {
    const x = new Float32Array([3, 4, 0, 0, 1, 1, 1, 1]); // [2 vectors, 4]
    const weight = new Float32Array([1, 2, 1, 0.5]);
    const out = new Float32Array(8);
    rmsNorm(x, weight, 2, 4, 0, out);
    const rms0 = Math.sqrt((9 + 16) / 4);
    const want = [3 / rms0, (2 * 4) / rms0, 0, 0, 1, 2, 1, 0.5];
    want.forEach((w, i) => expect(out[i]).toBeCloseTo(w, 6));
  });

  it('applies per head when called over [tokens * heads, headDim]', () => {
    const x = rand(2 * 3 * 8, 1); // [2 tokens, 3 heads, 8]
    const weight = rand(8, 2);
    const out = new Float32Array(x.length);
    rmsNorm(x, weight, 6, 8, 1e-6, out);
    for (let v = 0; v < 6; v++) {
      const head = x.subarray(v * 8, v * 8 + 8);
      const rms = Math.sqrt(head.reduce((s, a) => s + a * a, 0) / 8 + 1e-6);
      for (let i = 0; i < 8; i++) expect(out[v * 8 + i]).toBeCloseTo((weight[i] * head[i]) / rms, 5);
    }
  });
});

describe('matmul', () => {
  it('computes x . W^T + bias for HF [out, in] weights', () => {
    const n = 3, k = 5, m = 4;
    const x = rand(n * k, 3);
    const w: Matrix = { rows: m, cols: k, data: rand(m * k, 4) };
    const bias = rand(m, 5);
    const out = new Float32Array(n * m);
    matmul(x, n, w, bias, out);
    for (let t = 0; t < n; t++) {
      for (let r = 0; r < m; r++) {
        let want = bias[r];
        for (let c = 0; c < k; c++) want += x[t * k + c] * w.data[r * k + c];
        expect(out[t * m + r]).toBeCloseTo(want, 5);
      }
    }
  });

  it('gives every token the same result whatever else is in the batch', () => {
    const k = 64, m = 16;
    const w: Matrix = { rows: m, cols: k, data: rand(m * k, 6) };
    const batch = rand(5 * k, 7);
    const outBatch = new Float32Array(5 * m);
    matmul(batch, 5, w, null, outBatch);
    const outSolo = new Float32Array(m);
    matmul(batch.subarray(3 * k, 4 * k), 1, w, null, outSolo);
    expect(outSolo).toEqual(outBatch.subarray(3 * m, 4 * m));
  });

  for (const dtype of ['f16', 'bf16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'] as const) {
    it(`matmulQuant over ${dtype} equals matmul over the dequantized weight, bitwise`, () => {
      const rows = 6, cols = 256, n = 3;
      const t: TensorDesc = { name: 'w', dtype, shape: [rows, cols], data: encodeTensor(rand(rows * cols, 8), cols, dtype) };
      const x = rand(n * cols, 9);
      const outQuant = new Float32Array(n * rows);
      const outDense = new Float32Array(n * rows);
      matmulQuant(x, n, t, null, outQuant);
      matmul(x, n, { rows, cols, data: dequantize(t) }, null, outDense);
      expect(outQuant).toEqual(outDense);
    });
  }
});

describe('rope', () => {
  const headDim = 8;
  const config = syntheticModelDesc({ arch: 'llama', dims: { ...TINY_SYNTH_DIMS, headDim } }).config;

  it('rotates each (i, i + half) pair by position * theta^(-2i/headDim)', () => {
    const invFreq = ropeInverseFrequencies(config, 0);
    const x = rand(2 * headDim, 10); // [1 token, 2 heads, 8]
    const rotated = x.slice();
    rope(rotated, 1, 2, headDim, new Int32Array([7]), invFreq);
    for (let h = 0; h < 2; h++) {
      for (let i = 0; i < headDim / 2; i++) {
        const angle = 7 * Math.pow(10000, (-2 * i) / headDim);
        const [a, b] = [x[h * headDim + i], x[h * headDim + i + headDim / 2]];
        expect(rotated[h * headDim + i]).toBeCloseTo(a * Math.cos(angle) - b * Math.sin(angle), 5);
        expect(rotated[h * headDim + i + headDim / 2]).toBeCloseTo(b * Math.cos(angle) + a * Math.sin(angle), 5);
      }
    }
  });

  it('makes q . k depend only on the distance between positions', () => {
    const invFreq = ropeInverseFrequencies(config, 0);
    const q = rand(headDim, 11), k = rand(headDim, 12);
    const dotAt = (pq: number, pk: number): number => {
      const qr = q.slice(), kr = k.slice();
      rope(qr, 1, 1, headDim, new Int32Array([pq]), invFreq);
      rope(kr, 1, 1, headDim, new Int32Array([pk]), invFreq);
      return qr.reduce((s, a, i) => s + a * kr[i], 0);
    };
    expect(dotAt(10, 3)).toBeCloseTo(dotAt(107, 100), 4);
    expect(dotAt(10, 3)).not.toBeCloseTo(dotAt(10, 4), 4);
  });
});

describe('slotMapping and kvWrite', () => {
  it('puts position p of a row in block blockTable[p / blockSize] at offset p % blockSize', () => {
    const rows = [
      { startPos: 3, tokenIds: new Int32Array(3), blockTable: new Int32Array([5, 2]) },
      { startPos: 0, tokenIds: new Int32Array(1), blockTable: new Int32Array([7]) },
    ];
    const slots = slotMapping(rows, 4);
    expect(Array.from(slots)).toEqual([5 * 4 + 3, 2 * 4 + 0, 2 * 4 + 1, 7 * 4 + 0]);
    expect(() => slotMapping([{ startPos: 8, tokenIds: new Int32Array(1), blockTable: new Int32Array([1, 2]) }], 4)).toThrow(/beyond/);

    const kvDim = 2;
    const k = new Float32Array([1, 1, 2, 2, 3, 3, 4, 4]);
    const v = k.map((a) => -a);
    const kCache = new Float32Array(8 * 4 * kvDim);
    const vCache = new Float32Array(8 * 4 * kvDim);
    kvWrite(k, v, slots, kvDim, kCache, vCache, 'f32');
    expect(Array.from(kCache.subarray(23 * kvDim, 24 * kvDim))).toEqual([1, 1]);
    expect(Array.from(vCache.subarray(9 * kvDim, 10 * kvDim))).toEqual([-3, -3]);
    expect(Array.from(kCache.subarray(28 * kvDim, 29 * kvDim))).toEqual([4, 4]);
  });
});

describe('pagedAttention', () => {
  it('matches naive causal GQA attention over contiguous K/V for rows with scattered blocks', () => {
    const numHeads = 4, numKvHeads = 2, headDim = 8, blockSize = 4, numBlocks = 12;
    const kvDim = numKvHeads * headDim;
    // row 0: 9 positions in blocks [3, 9, 1]; row 1: 5 positions in blocks [10, 4]
    const rowLengths = [9, 5];
    const tables = [[3, 9, 1], [10, 4]];
    const kAll = rowLengths.map((n, r) => rand(n * kvDim, 20 + r)); // contiguous [n, kvDim] per row
    const vAll = rowLengths.map((n, r) => rand(n * kvDim, 30 + r));
    const kCache = new Float32Array(numBlocks * blockSize * kvDim);
    const vCache = new Float32Array(numBlocks * blockSize * kvDim);
    rowLengths.forEach((n, r) => {
      const slots = slotMapping([{ startPos: 0, tokenIds: new Int32Array(n), blockTable: new Int32Array(tables[r]) }], blockSize);
      kvWrite(kAll[r], vAll[r], slots, kvDim, kCache, vCache, 'f32');
    });
    // this step: row 0 queries positions 6..8 (a prefill chunk), row 1 queries position 4 (decode)
    const positions = new Int32Array([6, 7, 8, 4]);
    const tokenRows = new Int32Array([0, 0, 0, 1]);
    const blockTables = new Int32Array([3, 9, 1, 10, 4, 0]); // [2 rows, 3], padded with block 0
    const q = rand(4 * numHeads * headDim, 40);
    const out = new Float32Array(q.length);
    pagedAttention(q, 4, kCache, vCache, { numHeads, numKvHeads, headDim, blockSize, positions, tokenRows, blockTables, maxBlocksPerRow: 3 }, out);

    for (let t = 0; t < 4; t++) {
      const r = tokenRows[t], pos = positions[t];
      for (let h = 0; h < numHeads; h++) {
        const kh = Math.floor(h / 2);
        const scores = Array.from({ length: pos + 1 }, (_, j) => {
          let s = 0;
          for (let d = 0; d < headDim; d++) s += q[(t * numHeads + h) * headDim + d] * kAll[r][j * kvDim + kh * headDim + d];
          return s / Math.sqrt(headDim);
        });
        const max = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - max));
        const sum = e.reduce((a, b) => a + b, 0);
        for (let d = 0; d < headDim; d++) {
          const want = e.reduce((acc, w, j) => acc + (w / sum) * vAll[r][j * kvDim + kh * headDim + d], 0);
          expect(out[(t * numHeads + h) * headDim + d]).toBeCloseTo(want, 5);
        }
      }
    }
  });
});

describe('swiglu', () => {
  it('computes silu(gate) * up', () => {
    const gate = new Float32Array([0, 1, -2, 5]);
    const up = new Float32Array([3, 2, 1, -1]);
    const out = new Float32Array(4);
    swiglu(gate, up, 4, out);
    const silu = (g: number): number => g / (1 + Math.exp(-g));
    [0, 1, -2, 5].forEach((g, i) => expect(out[i]).toBeCloseTo(silu(g) * up[i], 6));
  });
});

describe('residualAdd', () => {
  it('adds elementwise and rounds each sum to f32', () => {
    const a = new Float32Array([1, -2.5, 1e8, 3]);
    const b = new Float32Array([2, 0.5, 1, 2 ** -30]);
    // 1e8 + 1 and 3 + 2^-30 are not representable in f32: they round back to the larger term.
    expect(Array.from(residualAdd(a, b))).toEqual([3, -2, 1e8, 3]);
  });

  it('writes into a caller-provided output, which may alias the first input', () => {
    const a = new Float32Array([1, 2, 3]);
    const result = residualAdd(a, new Float32Array([10, 20, 30]), a);
    expect(result).toBe(a);
    expect(Array.from(a)).toEqual([11, 22, 33]);
  });

  it('rejects mismatched lengths', () => {
    expect(() => residualAdd(new Float32Array(3), new Float32Array(2))).toThrow(/lengths/);
  });
});
