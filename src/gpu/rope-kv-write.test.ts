// Parity of shaders/rope_kv_write.wgsl with its twin (rope on q and k, then kvWrite), with and
// without Llama-3 scaling, at positions into the thousands and scattered blocks, per KV storage
// type (the rounding to f16 / q8_0 happens in this kernel). Node WebGPU.
import { describe, expect, it } from 'vitest';
import type { StepPlan, StepRow } from '../engine/types';
import type { ModelConfig } from '../model/desc';
import { syntheticModelDesc, TINY_SYNTH_DIMS } from '../model/testing/synthetic-model-fixtures';
import { KV_CACHE_TYPES } from '../engine/kv-types';
import { ropeInverseFrequencies } from '../model/rope';
import { roundKvValues } from '../reference/kv-rounding';
import { kvWrite, rope, slotMapping } from '../reference/ops';
import { KV_TYPE_CODE, KV_WRITE_VALUES_PER_INVOCATION } from './kernels';
import { kvLayerLayout } from './kv-arena';
import { runKernel } from './testing/kernel-harness';
import { decodeKvWords, encodeKvWords } from './testing/kv-words';
import { ropeTable, ropeTableLevel } from './rope-tables';
import { StepMeta, TOKEN_INFO_WORDS } from './step-meta';
import { bits, scaledError, seededFloats } from './testing/test-util';

/** The angle-sum identity in f32 vs the twin's f64 cos/sin of the whole angle. */
/** A row with its one KV cache group's table, as slotMapping (the twin's) reads it. */
const firstTable = (row: StepRow) => ({ ...row, blockTable: row.blockTables[0]! });

const ROPE_TOLERANCE = 1e-5;
/** K after the twin's rope in f64 and the same rounding: a value near a rounding boundary may land one f16 ulp / q8_0 step away. */
const KV_TOLERANCE = { f32: ROPE_TOLERANCE, f16: 2 ** -10, q8_0: 1 / 127 };
const BLOCK_SIZE = 16;
const NUM_BLOCKS = 64;
const MAX_POSITIONS = 8192;

const llama3Scaling = { type: 'llama3' as const, factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 };

function configWith(ropeScaling: ModelConfig['ropeScaling'], headDim: number): ModelConfig {
  return { ...syntheticModelDesc({ arch: 'llama', dims: TINY_SYNTH_DIMS }).config, headDim, ropeTheta: 500000, ropeScaling };
}

/** Rows as (startPos, numTokens); each row's blocks drawn so that the written slots never collide. */
function makePlan(shapes: Array<[number, number]>): StepPlan {
  const sampling = { temperature: 0, topK: 0, topP: 1, seed: 0 };
  const rows = shapes.map(([startPos, n], r) => ({
    sessionId: `s${r}`,
    tokenIds: new Int32Array(n),
    startPos,
    blockTables: [Int32Array.from({ length: Math.ceil((startPos + n) / BLOCK_SIZE) }, (_, b) => 1 + ((r * 37 + b) % (NUM_BLOCKS - 1)))],
    sampling,
    sample: false,
  }));
  return { stepIndex: 0, rows };
}

/**
 * rope_kv_write's own f32 arithmetic on the host (Math.fround after every operation), from the same
 * tables: what the kernel must give bit for bit. x [numTokens, numHeads, headDim], rotated in place.
 */
function ropeFromTables(x: Float32Array, positions: number[], numHeads: number, headDim: number, table: Float32Array, level: number): void {
  const f = Math.fround;
  const half = headDim / 2;
  positions.forEach((pos, t) => {
    for (let i = 0; i < half; i++) {
      const lo = 2 * ((pos % level) * half + i);
      const hi = 2 * ((level + Math.floor(pos / level)) * half + i);
      const c = f(f(table[hi]! * table[lo]!) - f(table[hi + 1]! * table[lo + 1]!));
      const s = f(f(table[hi + 1]! * table[lo]!) + f(table[hi]! * table[lo + 1]!));
      for (let h = 0; h < numHeads; h++) {
        const base = (t * numHeads + h) * headDim;
        const a = x[base + i]!;
        const b = x[base + i + half]!;
        x[base + i] = f(f(a * c) - f(b * s));
        x[base + i + half] = f(f(b * c) + f(a * s));
      }
    }
  });
}

describe.each(KV_CACHE_TYPES)('rope_kv_write.wgsl, %s KV', (kvCacheType) => {
  for (const scaling of [null, llama3Scaling]) {
    it(`rotates q, writes rotated k and v like rope + kvWrite ${scaling ? 'with Llama-3 scaling' : 'without scaling'}`, async () => {
      const headDim = 32;
      const numHeads = 4;
      const numKvHeads = 2;
      const kvDim = numKvHeads * headDim;
      const config = configWith(scaling, headDim);
      const invFreq = ropeInverseFrequencies(config, 0);
      const level = ropeTableLevel(MAX_POSITIONS);
      const table = ropeTable(invFreq, level);

      const plan = makePlan([[0, 3], [1000, 2], [4095, 2], [7777, 1]]);
      const meta = new StepMeta({ maxTokens: 16, maxRows: 4, blockSize: BLOCK_SIZE, kvGroups: [{ numBlocks: NUM_BLOCKS, window: null }], maxPositions: MAX_POSITIONS, vocabSize: 1, attentionSplits: { splitKeys: 256, maxSplits: 1 } });
      meta.pack(plan);
      const T = meta.numTokens;
      const positions = Array.from({ length: T }, (_, t) => meta.tokens[t * TOKEN_INFO_WORDS + 1]!);
      const q = seededFloats(11, T * numHeads * headDim, 2); // [numTokens, numHeads, headDim]
      const k = seededFloats(12, T * kvDim, 2); // [numTokens, kvDim]
      const v = seededFloats(13, T * kvDim); // [numTokens, kvDim]
      const numSlots = NUM_BLOCKS * BLOCK_SIZE;
      const cacheFloats = numSlots * kvDim;
      // older positions, already in the type's values: K [numBlocks * blockSize, kvDim] then V
      const history = seededFloats(14, 2 * cacheFloats);
      roundKvValues(kvCacheType, history, 0, history.length, history, 0);
      const layout = kvLayerLayout(kvCacheType, numSlots, kvDim);
      const historyWords = encodeKvWords(kvCacheType, history.subarray(0, cacheFloats), history.subarray(cacheFloats), kvDim);
      const invocations = (numHeads * headDim) / 2 + kvDim / KV_WRITE_VALUES_PER_INVOCATION[kvCacheType];
      const result = await runKernel(
        'rope_kv_write',
        { KV_TYPE: KV_TYPE_CODE[kvCacheType] },
        [
          new Uint32Array([T, numHeads, numKvHeads, headDim, level, BLOCK_SIZE, kvDim, layout.vOffsetWords]),
          meta.tokens.slice(0, T * TOKEN_INFO_WORDS),
          table,
          meta.blockTables[0]!.slice(0, meta.numBlockTableEntries),
          q,
          k,
          v,
          historyWords,
        ],
        [Math.ceil(invocations / 64), T],
        [4, 5, 7],
      );
      const gpuQ = new Float32Array(result.get(4)!);
      const decoded = decodeKvWords(kvCacheType, new Uint32Array(result.get(7)!), numSlots, kvDim);
      const gpuKv = new Float32Array(2 * cacheFloats);
      gpuKv.set(decoded.k);
      gpuKv.set(decoded.v, cacheFloats);
      expect(bits(new Float32Array(result.get(5)!))).toEqual(bits(k)); // k itself is left unrotated

      // The twin: rope on q and on k (f64 cos/sin), then kvWrite.
      const cpuQ = Float32Array.from(q);
      const cpuK = Float32Array.from(k);
      rope(cpuQ, T, numHeads, headDim, Int32Array.from(positions), invFreq);
      rope(cpuK, T, numKvHeads, headDim, Int32Array.from(positions), invFreq);
      const kCache = history.slice(0, cacheFloats);
      const vCache = history.slice(cacheFloats);
      const slots = slotMapping(plan.rows.map(firstTable), BLOCK_SIZE);
      kvWrite(cpuK, v, slots, kvDim, kCache, vCache, kvCacheType);
      expect(scaledError(gpuQ, cpuQ)).toBeLessThanOrEqual(ROPE_TOLERANCE);
      expect(scaledError(gpuKv.subarray(0, cacheFloats), kCache)).toBeLessThanOrEqual(KV_TOLERANCE[kvCacheType]);
      expect(bits(gpuKv.subarray(cacheFloats))).toEqual(bits(vCache)); // V rounded as the twin does, every other slot untouched

      // Bit for bit: the f32 angle-sum arithmetic the separate rope kernel did, on q and on k's slots.
      const exactQ = Float32Array.from(q);
      const exactK = Float32Array.from(k);
      ropeFromTables(exactQ, positions, numHeads, headDim, table, level);
      ropeFromTables(exactK, positions, numKvHeads, headDim, table, level);
      const exactKCache = history.slice(0, cacheFloats);
      kvWrite(exactK, v, slots, kvDim, exactKCache, new Float32Array(cacheFloats), kvCacheType);
      expect(bits(gpuQ)).toEqual(bits(exactQ));
      expect(bits(gpuKv.subarray(0, cacheFloats))).toEqual(bits(exactKCache));
    });
  }
});
