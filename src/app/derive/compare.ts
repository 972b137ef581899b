// The Compare card's figures: each side's decode throughput over its own sessions' decode-only
// steps and their ratio, by the same definitions (src/protocol/metrics.ts) the benchmark reports.
import type { StepEvent } from '../../protocol/events';
import { decodeThroughput, speedup, type DecodeThroughput } from '../../protocol/metrics';

export interface CompareSide {
  steps: readonly StepEvent[];
  sessionIds: ReadonlySet<string>;
}

export interface CompareOutcome {
  serialized: DecodeThroughput;
  batched: DecodeThroughput;
  ratio: number | null;
}

export function compareOutcome(serialized: CompareSide, batched: CompareSide): CompareOutcome {
  const s = decodeThroughput(serialized.steps, serialized.sessionIds);
  const b = decodeThroughput(batched.steps, batched.sessionIds);
  return { serialized: s, batched: b, ratio: speedup(b, s) };
}
