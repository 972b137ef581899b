// Test-only: drives a ModelRunner the way the engine would (sessions joining at different steps,
// prompts fed in chunks, decode rows one token each) so two runners can be compared step by step.
// Not the engine's scheduler: no token budget, no preemption, no prefix sharing.
import type { SamplingParams, StepPlan, StepRow } from '../../engine/types';

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
}

export function drivenSession(id: string, prompt: number[], sampling: SamplingParams, joinStep = 0, leaveStep = Infinity): DrivenSession {
  return { id, prompt, joinStep, leaveStep, sampling, output: [], fed: 0, blockTable: [] };
}

export function greedy(seed = 0): SamplingParams {
  return { temperature: 0, topK: 0, topP: 1, seed };
}

export class StepDriver {
  private nextBlock = 1;
  private stepIndex = 0;

  constructor(
    readonly sessions: DrivenSession[],
    private readonly blockSize: number,
    private readonly chunkSize: number,
  ) {}

  /** The next step: every riding session feeds its next prompt chunk or its newest token. */
  nextPlan(): StepPlan {
    const rows: StepRow[] = [];
    for (const s of this.sessions) {
      if (this.stepIndex < s.joinStep || this.stepIndex > s.leaveStep) continue;
      const all = [...s.prompt, ...s.output];
      const n = s.fed < s.prompt.length ? Math.min(this.chunkSize, s.prompt.length - s.fed) : 1;
      const tokenIds = all.slice(s.fed, s.fed + n);
      while (s.blockTable.length * this.blockSize < s.fed + n) s.blockTable.push(this.nextBlock++);
      rows.push({
        sessionId: s.id,
        tokenIds: Int32Array.from(tokenIds),
        startPos: s.fed,
        blockTable: Int32Array.from(s.blockTable),
        sampling: s.sampling,
        sample: s.fed + n >= s.prompt.length,
      });
    }
    return { stepIndex: this.stepIndex++, rows };
  }

  /** Records what a step fed and the tokens it sampled (plan row order). */
  update(plan: StepPlan, sampledIds: Int32Array): void {
    plan.rows.forEach((row, r) => {
      const s = this.sessions.find((x) => x.id === row.sessionId)!;
      s.fed += row.tokenIds.length;
      if (row.sample) s.output.push(sampledIds[r]!);
    });
  }

  get blocksUsed(): number {
    return this.nextBlock;
  }
}
