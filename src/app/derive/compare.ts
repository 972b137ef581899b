// The Compare card's figures: each side's decode throughput over its own sessions' decode-only
// steps and their ratio (batched vs serialized, or speculation on vs off), and what speculation
// did on its side, by the same definitions (src/protocol/metrics.ts) the benchmark reports.
import type { StepEvent } from '../../protocol/events';
import { decodeThroughput, speculationFigures, speedup, type DecodeThroughput, type SpeculationFigures } from '../../protocol/metrics';

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

export interface SpeculationCompareOutcome {
  off: DecodeThroughput;
  on: DecodeThroughput;
  /** on over off decode tok/s; null when either side measured nothing. */
  ratio: number | null;
  /** Tokens per row-step and draft acceptance of the speculating side. */
  onFigures: SpeculationFigures;
}

export function speculationCompareOutcome(off: CompareSide, on: CompareSide): SpeculationCompareOutcome {
  const offRate = decodeThroughput(off.steps, off.sessionIds);
  const onRate = decodeThroughput(on.steps, on.sessionIds);
  return { off: offRate, on: onRate, ratio: speedup(onRate, offRate), onFigures: speculationFigures(on.steps, on.sessionIds) };
}
