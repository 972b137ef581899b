// LlamaCppRunner: llamaCppForward over its own paged KV pool, sampling as CpuRunner does, for the
// oracle test. Not an engine ModelRunner: no limits, no block copies, one synchronous step at a time.
import type { StepPlan } from '../../engine/types';
import type { ModelDesc } from '../../model/desc';
import type { KvCacheType } from '../../engine/kv-types';
import type { CpuStepDetail } from '../cpu-runner';
import { KvPool } from '../kv-pool';
import { sampleToken } from '../sample';
import { llamaCppForward } from './forward';
import type { LlamaCppEmulation } from './rounding';
import { loadLlamaCppWeights, type LlamaCppWeights } from './weights';

export class LlamaCppRunner {
  readonly weights: LlamaCppWeights;
  readonly kv: KvPool;

  constructor(model: ModelDesc, emulation: LlamaCppEmulation, pool: { blockSize: number; numBlocks: number; kvCacheType: KvCacheType }) {
    this.weights = loadLlamaCppWeights(model, emulation, pool.kvCacheType);
    const c = this.weights.config;
    this.kv = new KvPool({ blockSize: pool.blockSize, kvCacheType: pool.kvCacheType, groups: [{ numBlocks: pool.numBlocks, window: null }], numLayers: c.numLayers, numKvHeads: c.numKvHeads, headDim: c.headDim });
  }

  /** One step: the logits after each sampling row's last token, and the token drawn from them. */
  executeDetailed(plan: StepPlan): CpuStepDetail {
    const { sampleRows, logits } = llamaCppForward(this.weights, this.kv, plan);
    const vocab = this.weights.config.vocabSize;
    const sampledIds = new Int32Array(plan.rows.length).fill(-1); // [numRows]
    sampleRows.forEach((r, i) => {
      const { startPos, tokenIds, sampling } = plan.rows[r];
      sampledIds[r] = sampleToken(logits.subarray(i * vocab, (i + 1) * vocab), sampling, startPos + tokenIds.length);
    });
    return { sampledIds, sampleRows, logits };
  }
}
