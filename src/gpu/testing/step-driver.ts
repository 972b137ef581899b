// Test-only: drives a ModelRunner the way the engine would (sessions joining at different steps,
// prompts fed in chunks, decode rows one token each, or with drafts to verify) so two runners can
// be compared step by step; for a runner with a window group, window tables whose out-of-window
// blocks go back to a LIFO free list at once (so other sessions overwrite them).
// Not the engine's scheduler: no token budget, no preemption, no prefix sharing.
import type { SamplingParams, StepPlan, StepResult, StepRow } from '../../engine/types';

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
  blockTable: number[];
  /** Window-pool ids at blockTable's indices (0: given back), with a window group. */
  windowTable: number[];
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
  return { id, prompt, joinStep, leaveStep, sampling, output: [], fed: 0, blockTable: [], windowTable: [], numDrafted: 0, numAccepted: 0, ...(drafts ? { drafts } : {}) };
}

export function greedy(seed = 0): SamplingParams {
  return { temperature: 0, topK: 0, topP: 1, seed };
}

export class StepDriver {
  private nextBlock = 1;
  private stepIndex = 0;
  /** Free window-pool ids, the last freed on top. */
  private readonly freeWindowBlocks: number[];

  constructor(
    readonly sessions: DrivenSession[],
    private readonly blockSize: number,
    private readonly chunkSize: number,
    /** The runner's window group (ModelRunner.windowGroup): rows then carry window tables. */
    private readonly windowGroup?: { readonly numBlocks: number; readonly window: number },
  ) {
    this.freeWindowBlocks = windowGroup ? Array.from({ length: windowGroup.numBlocks - 1 }, (_, i) => windowGroup.numBlocks - 1 - i) : [];
  }

  /** Gives back s's window blocks no query from position `from` on sees (all of them with from = Infinity). */
  private releaseWindow(s: DrivenSession, from: number): void {
    if (!this.windowGroup) return;
    const first = from === Infinity ? s.windowTable.length : Math.floor(Math.max(0, from - this.windowGroup.window + 1) / this.blockSize);
    for (let b = 0; b < Math.min(first, s.windowTable.length); b++) {
      if (s.windowTable[b]! > 0) this.freeWindowBlocks.push(s.windowTable[b]!);
      s.windowTable[b] = 0;
    }
  }

  /** The next step: every riding session feeds its next prompt chunk or its newest token. */
  nextPlan(): StepPlan {
    const rows: StepRow[] = [];
    for (const s of this.sessions) {
      if (this.stepIndex > s.leaveStep) this.releaseWindow(s, Infinity);
      if (this.stepIndex < s.joinStep || this.stepIndex > s.leaveStep) continue;
      const all = [...s.prompt, ...s.output];
      const decoding = s.fed >= s.prompt.length;
      const drafts = decoding && s.drafts ? s.drafts(s, this.stepIndex) : [];
      const n = decoding ? 1 : Math.min(this.chunkSize, s.prompt.length - s.fed);
      const tokenIds = [...all.slice(s.fed, s.fed + n), ...drafts];
      while (s.blockTable.length * this.blockSize < s.fed + tokenIds.length) s.blockTable.push(this.nextBlock++);
      this.releaseWindow(s, s.fed);
      while (this.windowGroup && s.windowTable.length < s.blockTable.length) {
        const id = this.freeWindowBlocks.pop();
        if (id === undefined) throw new Error('StepDriver: window pool exhausted');
        s.windowTable.push(id);
      }
      rows.push({
        sessionId: s.id,
        tokenIds: Int32Array.from(tokenIds),
        startPos: s.fed,
        blockTable: Int32Array.from(s.blockTable),
        ...(this.windowGroup ? { windowBlockTable: Int32Array.from(s.windowTable) } : {}),
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
