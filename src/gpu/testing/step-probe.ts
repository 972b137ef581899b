// Test and bench scaffolding over GpuRunner.executeWith: a step that also reads back its logits
// (parity tests) and a step with every dispatch timed in its own pass (bench/kernels.node.ts).
// Not a serving path: each call makes and frees its own buffers.
import { sampledRows } from '../../engine/sampled-positions';
import type { StepPlan, StepResult } from '../../engine/types';
import type { GpuRunner } from '../gpu-runner';

/** A step's result plus the logits sampled from, as CpuRunner.executeDetailed gives them. */
export interface GpuStepDetail extends StepResult {
  /**
   * Indices into plan.rows of the rows that sampled, in plan order; a row with k drafts appears
   * k + 1 times (after its last known token, then after each draft).
   */
  sampleRows: number[];
  /** [sampleRows.length, vocab] */
  logits: Float32Array;
}

/** runner.execute(plan), also reading back the logits each sampled position drew from. */
export async function executeDetailed(runner: GpuRunner, plan: StepPlan): Promise<GpuStepDetail> {
  const sampleRows = sampledRows(plan.rows);
  const bytes = sampleRows.length * runner.vocabSize * 4;
  const readback = runner.device.createBuffer({ label: 'logits-readback', size: Math.max(16, bytes), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const result = await runner.executeWith(plan, (step) => {
      const timed = runner.servingPass(step);
      if (bytes > 0) step.encoder.copyBufferToBuffer(step.logits, 0, readback, 0, bytes);
      return timed;
    });
    let logits = new Float32Array(0);
    if (bytes > 0) {
      await readback.mapAsync(GPUMapMode.READ, 0, bytes);
      logits = new Float32Array(readback.getMappedRange(0, bytes).slice(0));
      readback.unmap();
    }
    return { ...result, sampleRows, logits };
  } finally {
    readback.destroy();
  }
}

/**
 * Runs the step with every dispatch in its own timed pass and returns each dispatch's GPU time.
 * Its passes compute what the serving pass does (the same KV written, the same ids drawn), but
 * split, so their total is not a serving step's time; needs 'timestamp-query'.
 */
export async function profileStep(runner: GpuRunner, plan: StepPlan): Promise<{ label: string; ms: number }[]> {
  const { device } = runner;
  if (!device.features.has('timestamp-query')) throw new Error('profiling needs the timestamp-query feature');
  const labels: string[] = [];
  const buffers: { querySet: GPUQuerySet; resolved: GPUBuffer; readback: GPUBuffer }[] = [];
  try {
    await runner.executeWith(plan, (step) => {
      const dispatches = step.dispatches.filter((d) => step.runs(d));
      const n = dispatches.length;
      const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * n });
      const resolved = device.createBuffer({ size: 16 * n, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      const readback = device.createBuffer({ size: 16 * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      buffers.push({ querySet, resolved, readback });
      dispatches.forEach((d, i) => {
        const pass = step.encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
        step.encode(pass, [d]);
        pass.end();
        labels.push(d.label);
      });
      step.encoder.resolveQuerySet(querySet, 0, 2 * n, resolved, 0);
      step.encoder.copyBufferToBuffer(resolved, 0, readback, 0, resolved.size);
      return false;
    });
    if (buffers.length === 0) return [];
    const { readback } = buffers[0]!;
    await readback.mapAsync(GPUMapMode.READ);
    const stamps = new BigUint64Array(readback.getMappedRange().slice(0));
    readback.unmap();
    return labels.map((label, i) => ({ label, ms: Number(stamps[2 * i + 1]! - stamps[2 * i]!) / 1e6 }));
  } finally {
    for (const b of buffers) {
      b.querySet.destroy();
      b.resolved.destroy();
      b.readback.destroy();
    }
  }
}
