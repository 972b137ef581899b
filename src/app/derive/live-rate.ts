// The header's aggregate decode tok/s: decodeThroughput (src/protocol/metrics.ts) over the steps
// of the last few seconds. Only picks the window; every rate is the metrics module's own.
import { decodeThroughput, stepEndMs, type DecodeThroughput, type MeasuredStep } from '../../protocol/metrics';

/** The steps that ended within windowMs of the newest one (engine clock), oldest first. */
export function recentSteps<T extends MeasuredStep>(steps: readonly T[], windowMs: number): T[] {
  if (steps.length === 0) return [];
  const newestEndMs = stepEndMs(steps[steps.length - 1]);
  let first = steps.length - 1;
  while (first > 0 && stepEndMs(steps[first - 1]) > newestEndMs - windowMs) first--;
  return steps.slice(first);
}

/** Decode tok/s of all sessions together over the recent window; null before any decode step. */
export function liveDecodeRate(steps: readonly MeasuredStep[], windowMs: number): DecodeThroughput | null {
  const rate = decodeThroughput(recentSteps(steps, windowMs));
  return rate.forwardPasses > 0 ? rate : null;
}
