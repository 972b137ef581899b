// RunnerWrapper: a ModelRunner that forwards to another, for tests that delay, count or check
// execute() around a real or fake runner. Test-only; not a runner of its own.
import type { ModelRunner, StepMaskFill, StepPlan, StepResult } from '../types';

export class RunnerWrapper implements ModelRunner {
  readonly blockSize: number;
  readonly maxTokensPerStep: number;
  readonly maxRows: number;
  readonly maxContext?: number;
  readonly maxDraftTokens?: number;
  readonly kvGroups: ModelRunner['kvGroups'];

  constructor(protected readonly inner: ModelRunner) {
    this.blockSize = inner.blockSize;
    this.maxTokensPerStep = inner.maxTokensPerStep;
    this.maxRows = inner.maxRows;
    this.maxContext = inner.maxContext;
    this.maxDraftTokens = inner.maxDraftTokens;
    this.kvGroups = inner.kvGroups;
  }

  execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    return this.inner.execute(plan, masks);
  }

  dispose(): void {
    this.inner.dispose();
  }
}
