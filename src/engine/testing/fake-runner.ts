// FakeRunner: a test ModelRunner whose "KV cache" is a paged array of token ids, read back through
// each row's block table to pick the next token. Not a model: it exists to make KV bugs change tokens.
import { fmix32, sampleUniform } from '../rng';
import type { ModelRunner, StepPlan, StepResult } from '../types';

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
  /** [numBlocks * blockSize] token id stored at each KV slot. */
  readonly slots: Int32Array;
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
    this.slots = new Int32Array(this.numBlocks * this.blockSize).fill(UNWRITTEN);
  }

  execute(plan: StepPlan): Promise<StepResult> {
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
    for (const row of plan.rows) {
      row.tokenIds.forEach((tokenId, i) => {
        const slot = this.slotOf(row.blockTable, row.startPos + i);
        if (writtenThisStep.has(slot)) throw new Error(`two rows write KV slot ${slot} in step ${plan.stepIndex}`);
        writtenThisStep.add(slot);
        this.slots[slot] = tokenId;
      });
    }
    const sampledIds = new Int32Array(plan.rows.length).fill(-1); // [numRows]
    plan.rows.forEach((row, r) => {
      if (!row.sample) return;
      const lastPos = row.startPos + row.tokenIds.length - 1;
      let h = 0x2545f491;
      for (let pos = 0; pos <= lastPos; pos++) {
        const tokenId = this.slots[this.slotOf(row.blockTable, pos)];
        if (tokenId === UNWRITTEN) throw new Error(`row ${row.sessionId} reads unwritten KV at position ${pos}`);
        h = fmix32((h ^ tokenId) + Math.imul(pos + 1, 0x9e3779b9));
      }
      if (row.sampling.temperature > 0) {
        h = fmix32(h ^ Math.floor(sampleUniform(row.sampling.seed, lastPos + 1) * 16777216));
      }
      sampledIds[r] = this.eosEvery > 0 && h % this.eosEvery === 0 ? this.eosTokenId : this.firstTokenId + ((h >>> 8) % this.vocabSize);
    });
    return { sampledIds };
  }

  dispose(): void {}

  private slotOf(blockTable: Int32Array, pos: number): number {
    const blockIndex = Math.floor(pos / this.blockSize);
    if (blockIndex >= blockTable.length) throw new Error(`position ${pos} is past the block table`);
    const blockId = blockTable[blockIndex];
    if (blockId <= 0 || blockId >= this.numBlocks) throw new Error(`block table holds invalid block ${blockId}`);
    return blockId * this.blockSize + (pos % this.blockSize);
  }
}
