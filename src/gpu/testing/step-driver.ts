// Test-only: drives a ModelRunner the way the engine would (sessions joining at different steps,
// prompts fed in chunks, decode rows one token each, or with drafts to verify) so two runners can
// be compared step by step; a block table per KV cache group of the runner, a sliding-window
// group's blocks out of the window going back to a LIFO free list at once (so other sessions
// overwrite them). Not the engine's scheduler: no token budget, no preemption, no prefix sharing.
import { firstReadBlock, type KvCacheGroupSpec, type SamplingParams, type StepPlan, type StepResult, type StepRow } from '../../engine/types';

export interface DrivenSession {
  id: string;
  prompt: number[];
  /** First step at which the session rides in the cohort. */
  joinStep: number;
  /** Last step it rides in (inclusive); it leaves afterwards. */
  leaveStep: number;
  sampling: SamplingParams;
  /** Tokens generated so far, fed back one per step. */
  output: number[];
  /** Tokens already in the KV cache. */
  fed: number;
  /** [runner's kvGroups] block ids per group (0: given back), all as long as the first. */
  blockTables: number[][];
  /**
   * Tokens a decode row carries after its newest one to verify (none: plain decode), given the
   * session and the step; an accepted draft stays fed, the first sample past them is the output's.
   */
  drafts?: (s: DrivenSession, stepIndex: number) => number[];
  /** Drafts fed and accepted so far. */
  numDrafted: number;
  numAccepted: number;
}

export function drivenSession(id: string, prompt: number[], sampling: SamplingParams, joinStep = 0, leaveStep = Infinity, drafts?: DrivenSession['drafts']): DrivenSession {
  return { id, prompt, joinStep, leaveStep, sampling, output: [], fed: 0, blockTables: [], numDrafted: 0, numAccepted: 0, ...(drafts ? { drafts } : {}) };
}

export function greedy(seed = 0): SamplingParams {
  return { temperature: 0, topK: 0, topP: 1, seed };
}

export class StepDriver {
  private nextBlock = 1;
  private stepIndex = 0;
  /** [kvGroups] free ids of each group past the first, the last freed on top (the first's come from nextBlock). */
  private readonly freeBlocks: number[][];

  constructor(
    readonly sessions: DrivenSession[],
    private readonly blockSize: number,
    private readonly chunkSize: number,
    /** The runner's KV cache groups (ModelRunner.kvGroups): rows carry a table for each. */
    private readonly kvGroups: readonly KvCacheGroupSpec[] = [{ numBlocks: Infinity, window: null }],
  ) {
    this.freeBlocks = kvGroups.map((group, g) => (g === 0 ? [] : Array.from({ length: group.numBlocks - 1 }, (_, i) => group.numBlocks - 1 - i)));
  }

  /** Gives back s's blocks of groups past the first that no query from position `from` on reads (all of them with from = Infinity). */
  private release(s: DrivenSession, from: number): void {
    this.kvGroups.forEach((group, g) => {
      const table = s.blockTables[g];
      if (g === 0 || !table) return;
      const first = from === Infinity ? table.length : firstReadBlock(group.window, this.blockSize, from);
      for (let b = 0; b < Math.min(first, table.length); b++) {
        if (table[b]! > 0) this.freeBlocks[g]!.push(table[b]!);
        table[b] = 0;
      }
    });
  }

  /** The next step: every riding session feeds its next prompt chunk or its newest token. */
  nextPlan(): StepPlan {
    const rows: StepRow[] = [];
    for (const s of this.sessions) {
      if (this.stepIndex > s.leaveStep) this.release(s, Infinity);
      if (this.stepIndex < s.joinStep || this.stepIndex > s.leaveStep) continue;
      const all = [...s.prompt, ...s.output];
      const decoding = s.fed >= s.prompt.length;
      const drafts = decoding && s.drafts ? s.drafts(s, this.stepIndex) : [];
      const n = decoding ? 1 : Math.min(this.chunkSize, s.prompt.length - s.fed);
      const tokenIds = [...all.slice(s.fed, s.fed + n), ...drafts];
      while (s.blockTables.length < this.kvGroups.length) s.blockTables.push([]);
      const first = s.blockTables[0]!;
      while (first.length * this.blockSize < s.fed + tokenIds.length) first.push(this.nextBlock++);
      this.release(s, s.fed);
      for (let g = 1; g < this.kvGroups.length; g++) {
        while (s.blockTables[g]!.length < first.length) {
          const id = this.freeBlocks[g]!.pop();
          if (id === undefined) throw new Error(`StepDriver: KV cache group ${g}'s pool exhausted`);
          s.blockTables[g]!.push(id);
        }
      }
      rows.push({
        sessionId: s.id,
        tokenIds: Int32Array.from(tokenIds),
        startPos: s.fed,
        blockTables: s.blockTables.map((table) => Int32Array.from(table)),
        sampling: s.sampling,
        sample: s.fed + n >= s.prompt.length,
        ...(drafts.length > 0 ? { numDraftTokens: drafts.length } : {}),
      });
    }
    return { stepIndex: this.stepIndex++, rows };
  }

  /**
   * Records what a step fed and the tokens it sampled (plan row order): a row's drafts are kept
   * while each equals the id sampled in its place, then the first id past them is appended.
   */
  update(plan: StepPlan, result: Pick<StepResult, 'sampledIds' | 'draftSampledIds'>): void {
    let draftAt = 0;
    plan.rows.forEach((row, r) => {
      const s = this.sessions.find((x) => x.id === row.sessionId)!;
      const k = row.numDraftTokens ?? 0;
      s.fed += row.tokenIds.length - k;
      if (!row.sample) return;
      const ids = [result.sampledIds[r]!, ...Array.from(result.draftSampledIds?.subarray(draftAt, draftAt + k) ?? [])];
      draftAt += k;
      s.numDrafted += k;
      for (let j = 0; j <= k; j++) {
        s.output.push(ids[j]!);
        if (j === k || ids[j] !== row.tokenIds[row.tokenIds.length - k + j]) break;
        s.fed++;
        s.numAccepted++;
      }
    });
  }

  get blocksUsed(): number {
    return this.nextBlock;
  }
}

/**
 * `plan` for a runner keeping only the first `numGroups` of the driver's KV cache groups: a runner
 * with one group (every position kept, the window only masking) reads the first tables alone.
 */
export function planForGroups(plan: StepPlan, numGroups: number): StepPlan {
  return { ...plan, rows: plan.rows.map((row) => ({ ...row, blockTables: row.blockTables.slice(0, numGroups) })) };
}
