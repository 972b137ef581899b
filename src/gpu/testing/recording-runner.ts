// The GPU tests' one recording runner: a RunnerWrapper over GpuRunner or CpuRunner that keeps each
// plan, its sampled ids, the logits of each sampled position and how many steps ran at once. Test-only.
import { sampledPosition } from '../../engine/sampled-positions';
import { RunnerWrapper } from '../../engine/testing/runner-wrapper';
import type { ModelRunner, StepPlan, StepResult } from '../../engine/types';
import { GpuRunner } from '../gpu-runner';
import { executeDetailed, type GpuStepDetail } from './step-probe';

/** A runner that gives each step's sampled logits itself (CpuRunner; the GPU folder names no reference code). */
export interface DetailedRunner extends ModelRunner {
  executeDetailed(plan: StepPlan): GpuStepDetail;
}

export interface RecordingOptions {
  /** Read back the logits of every sampled position (costs a readback per step on GpuRunner). */
  logits?: boolean;
  /** The wrapped runner is the test's to dispose (several engines share one device pool). */
  keepInner?: boolean;
}

export class RecordingRunner extends RunnerWrapper {
  /** Every plan executed, in order, with its result's ids. */
  readonly steps: Array<{ plan: StepPlan; result: StepResult }> = [];
  /** With `logits`: each sampled position's logits, keyed `sessionId@position` (the position the token sampled there goes to). */
  readonly logits = new Map<string, Float32Array>();
  /** The most execute() calls under way at once (the engine loop must never start a second). */
  maxInFlight = 0;
  private inFlight = 0;

  constructor(
    readonly runner: GpuRunner | DetailedRunner,
    private readonly options: RecordingOptions = {},
  ) {
    super(runner);
  }

  override async execute(plan: StepPlan): Promise<StepResult> {
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      await this.beforeStep(plan);
      const result = this.options.logits ? await this.executeRecordingLogits(plan) : await this.runner.execute(plan);
      await this.afterStep(plan);
      this.steps.push({ plan, result });
      return result;
    } finally {
      this.inFlight--;
    }
  }

  override dispose(): void {
    if (!this.options.keepInner) super.dispose();
  }

  /** Hooks around each step for a subclass (e.g. poisoning freed KV blocks while a step runs). */
  protected beforeStep(_plan: StepPlan): void | Promise<void> {}
  protected afterStep(_plan: StepPlan): void | Promise<void> {}

  private async executeRecordingLogits(plan: StepPlan): Promise<StepResult> {
    const detail = this.runner instanceof GpuRunner ? await executeDetailed(this.runner, plan) : this.runner.executeDetailed(plan);
    const vocab = detail.sampleRows.length > 0 ? detail.logits.length / detail.sampleRows.length : 0;
    // a row with k drafts samples k + 1 times, after its last known token and after each draft
    let previous = -1;
    let j = 0;
    detail.sampleRows.forEach((r, i) => {
      j = r === previous ? j + 1 : 0;
      previous = r;
      const row = plan.rows[r]!;
      this.logits.set(`${row.sessionId}@${sampledPosition(row, j)}`, detail.logits.slice(i * vocab, (i + 1) * vocab));
    });
    return { sampledIds: detail.sampledIds, ...(detail.draftSampledIds ? { draftSampledIds: detail.draftSampledIds } : {}) };
  }
}
