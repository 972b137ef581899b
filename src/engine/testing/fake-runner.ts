// FakeRunner: a test ModelRunner whose "KV cache" is a paged array of token ids, read back through
// each row's block table to pick the next token. Not a model: it exists to make KV bugs change tokens.
import { fmix32, sampleUniform } from '../rng';
import { numSampledPositions, sampledPosition, splitSampledIds } from '../sampled-positions';
import { slidingGroupBlocks, type KvCacheGroupSpec, type ModelRunner, type StepMaskFill, type StepPlan, type StepResult, type StepRow } from '../types';

export interface FakeRunnerOptions {
  blockSize?: number;
  numBlocks?: number;
  maxTokensPerStep?: number;
  maxRows?: number;
  /** Sampled ids are firstTokenId + (hash mod vocabSize), unless EOS is drawn. */
  firstTokenId?: number;
  vocabSize?: number;
  eosTokenId?: number;
  /** About one sample in eosEvery is EOS (0 = never). */
  eosEvery?: number;
  /** The model's context in positions (default: none beyond the pool). */
  maxContext?: number;
  /** Drafted tokens a row may carry (default 0: the runner declares no speculation and refuses drafts). */
  maxDraftTokens?: number;
  /**
   * About this share of samples (0..1, default 0) copy the token that followed the latest earlier
   * occurrence of the current token in the KV, so prompt-lookup drafts are often right.
   */
  copyRate?: number;
  /**
   * A sliding window (0 = none): each sample also hashes the last `window` positions, as a model
   * with local layers reads them. With slidingGroup (default true) those come from a second KV
   * cache group of that window (sized by slidingGroupBlocks) through each row's second block table;
   * without, from the first group (every position kept): both must sample the same.
   */
  window?: number;
  slidingGroup?: boolean;
}

const UNWRITTEN = -1;

export class FakeRunner implements ModelRunner {
  readonly blockSize: number;
  readonly numBlocks: number;
  readonly maxTokensPerStep: number;
  readonly maxRows: number;
  readonly firstTokenId: number;
  readonly vocabSize: number;
  readonly eosTokenId: number;
  readonly eosEvery: number;
  readonly maxContext: number | undefined;
  readonly maxDraftTokens: number;
  readonly copyRate: number;
  /** [numBlocks * blockSize] token id stored at each KV slot. */
  readonly slots: Int32Array;
  readonly window: number;
  readonly kvGroups: readonly KvCacheGroupSpec[];
  /** [kvGroups[1].numBlocks * blockSize] token id stored at each slot of the sliding group (empty with one group). */
  readonly slidingSlots: Int32Array;
  numExecuted = 0;

  constructor(options: FakeRunnerOptions = {}) {
    this.blockSize = options.blockSize ?? 16;
    this.numBlocks = options.numBlocks ?? 257;
    this.maxTokensPerStep = options.maxTokensPerStep ?? 4096;
    this.maxRows = options.maxRows ?? 64;
    this.firstTokenId = options.firstTokenId ?? 97;
    this.vocabSize = options.vocabSize ?? 26;
    this.maxContext = options.maxContext;
    this.eosTokenId = options.eosTokenId ?? 256;
    this.eosEvery = options.eosEvery ?? 0;
    this.maxDraftTokens = options.maxDraftTokens ?? 0;
    this.copyRate = options.copyRate ?? 0;
    this.slots = new Int32Array(this.numBlocks * this.blockSize).fill(UNWRITTEN);
    this.window = options.window ?? 0;
    const sliding = this.window > 0 && (options.slidingGroup ?? true) ? [{ numBlocks: slidingGroupBlocks(this.window, this.blockSize, this.maxRows, this.maxTokensPerStep), window: this.window }] : [];
    this.kvGroups = [{ numBlocks: this.numBlocks, window: null }, ...sliding];
    this.slidingSlots = new Int32Array((sliding[0]?.numBlocks ?? 0) * this.blockSize).fill(UNWRITTEN);
  }

  /** Ignores the masks' contents (its tokens come from the KV), but fills them first as a runner must. */
  execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    if (masks) return masks.fill().then(() => this.executeSync(plan));
    try {
      return Promise.resolve(this.executeSync(plan));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  executeSync(plan: StepPlan): StepResult {
    this.numExecuted++;
    const numTokens = plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
    if (plan.rows.length > this.maxRows) throw new RangeError(`${plan.rows.length} rows > maxRows ${this.maxRows}`);
    if (numTokens > this.maxTokensPerStep) throw new RangeError(`${numTokens} tokens > ${this.maxTokensPerStep}`);
    // writes first, as a forward pass stores every row's K/V before attention reads them
    const writtenThisStep = new Set<number>();
    const slidingWritten = new Set<number>();
    const sliding = this.kvGroups[1];
    for (const row of plan.rows) {
      if (row.blockTables.length !== this.kvGroups.length) throw new Error(`row ${row.sessionId} has ${row.blockTables.length} block tables for ${this.kvGroups.length} KV cache groups`);
      row.tokenIds.forEach((tokenId, i) => {
        const slot = this.slotOf(row.blockTables[0]!, row.startPos + i);
        if (writtenThisStep.has(slot)) throw new Error(`two rows write KV slot ${slot} in step ${plan.stepIndex}`);
        writtenThisStep.add(slot);
        this.slots[slot] = tokenId;
        if (!sliding) return;
        const slidingSlot = this.slotOf(row.blockTables[1]!, row.startPos + i, sliding.numBlocks);
        if (slidingWritten.has(slidingSlot)) throw new Error(`two rows write sliding-group slot ${slidingSlot} in step ${plan.stepIndex}`);
        slidingWritten.add(slidingSlot);
        this.slidingSlots[slidingSlot] = tokenId;
      });
    }
    const ids: number[] = []; // [sampled positions], in the plan's order (sampled-positions.ts)
    plan.rows.forEach((row) => {
      const k = row.numDraftTokens ?? 0;
      if (k > 0 && (k > this.maxDraftTokens || !row.sample || k >= row.tokenIds.length)) {
        throw new Error(`row ${row.sessionId} carries ${k} drafts (maxDraftTokens ${this.maxDraftTokens}, ${row.tokenIds.length} tokens, sample ${row.sample})`);
      }
      // one sample after the last known token, then one after each draft: each reads only the KV up to its position
      for (let i = 0; i < numSampledPositions(row); i++) ids.push(this.sampleAt(row, sampledPosition(row, i) - 1));
    });
    return splitSampledIds(plan.rows, ids);
  }

  /** The token after position `lastPos`, a function of the row's KV up to it (and the RNG at lastPos + 1). */
  private sampleAt(row: StepRow, lastPos: number): number {
    let h = 0x2545f491;
    const seen: number[] = [];
    for (let pos = 0; pos <= lastPos; pos++) {
      const tokenId = this.slots[this.slotOf(row.blockTables[0]!, pos)];
      if (tokenId === UNWRITTEN) throw new Error(`row ${row.sessionId} reads unwritten KV at position ${pos}`);
      h = fmix32((h ^ tokenId) + Math.imul(pos + 1, 0x9e3779b9));
      seen.push(tokenId);
    }
    // the local layers' view: the last `window` positions, from the sliding group where there is one
    const sliding = this.kvGroups[1];
    for (let pos = Math.max(0, lastPos - this.window + 1); this.window > 0 && pos <= lastPos; pos++) {
      const tokenId = sliding ? this.slidingSlots[this.slotOf(row.blockTables[1]!, pos, sliding.numBlocks)] : this.slots[this.slotOf(row.blockTables[0]!, pos)];
      if (tokenId === UNWRITTEN) throw new Error(`row ${row.sessionId} reads unwritten window KV at position ${pos}`);
      h = fmix32((h ^ tokenId) + Math.imul(lastPos - pos + 1, 0x85ebca6b));
    }
    if (row.sampling.temperature > 0) {
      h = fmix32(h ^ Math.floor(sampleUniform(row.sampling.seed, lastPos + 1) * 16777216));
    }
    if (this.eosEvery > 0 && h % this.eosEvery === 0) return this.eosTokenId;
    if (this.copyRate > 0 && (fmix32(h ^ 0x5bd1e995) >>> 8) / 16777216 < this.copyRate) {
      const current = seen[lastPos];
      for (let pos = lastPos - 1; pos >= 0; pos--) if (seen[pos] === current) return seen[pos + 1];
    }
    return this.firstTokenId + ((h >>> 8) % this.vocabSize);
  }

  dispose(): void {}

  private slotOf(blockTable: Int32Array, pos: number, numBlocks = this.numBlocks): number {
    const blockIndex = Math.floor(pos / this.blockSize);
    if (blockIndex >= blockTable.length) throw new Error(`position ${pos} is past the block table`);
    const blockId = blockTable[blockIndex];
    if (blockId <= 0 || blockId >= numBlocks) throw new Error(`block table holds invalid block ${blockId} at position ${pos}`);
    return blockId * this.blockSize + (pos % this.blockSize);
  }
}
