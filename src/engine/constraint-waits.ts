// The scheduler's waits on output constraints: a request's grammar compiled off the step loop, when
// one settles, and the fill of a plan's constrained rows' bitmasks the runner calls. Not the constraint
// itself (constraints.ts) nor which requests ride (scheduler.ts).
import { RequestConstraint, fillRowBitmask, maskWords, type ConstraintCache, type ConstraintMatcher } from './constraints';
import type { ScheduledEntry } from './plan-rows';
import type { Request } from './request';
import type { StepMaskFill, StepPlan } from './types';

export class ConstraintWaits {
  /** Compiles in progress: a request waits for its constraint outside the step loop. */
  private readonly compiling = new Set<Promise<void>>();
  /** Called when a constraint compile settles (the engine wakes its loop). */
  onSettled: (() => void) | null = null;

  /** `cache` compiles requests' output constraints (null: a constrained request ends with an error). */
  constructor(private readonly cache: ConstraintCache | null) {}

  /** Resolves when some compile in progress settles; null when no waiting request awaits one. */
  whenSettles(waiting: readonly Request[]): Promise<void> | null {
    const awaited = this.compiling.size > 0 && waiting.some((r) => r.constraint?.status === 'compiling');
    return awaited ? Promise.race(this.compiling) : null;
  }

  /** Compiles a request's constraint off the step loop; the request waits until it settles. */
  start(request: Request, c: NonNullable<Request['sampling']['constraint']>): void {
    const constraint = new RequestConstraint();
    request.constraint = constraint;
    const settled = new Promise<void>((resolve) => constraint.start(this.cache, c, resolve));
    this.compiling.add(settled);
    void settled.then(() => {
      this.compiling.delete(settled);
      this.onSettled?.();
    });
  }

  /**
   * The plan's constrained sampling rows and the fill of their bitmasks (constraints.ts
   * fillRowBitmask) from their matchers, for the runner to call while its forward runs
   * (StepMaskFill); undefined when no row is constrained.
   */
  masks(plan: StepPlan, entries: readonly ScheduledEntry[]): StepMaskFill | undefined {
    const rows: number[] = [];
    const matchers: ConstraintMatcher[] = [];
    for (let i = 0; i < plan.rows.length; i++) {
      const matcher = entries[i]?.request.constraint?.matcher;
      if (!matcher || !plan.rows[i]!.sample) continue;
      rows.push(i);
      matchers.push(matcher);
    }
    if (rows.length === 0) return undefined;
    const words = maskWords(this.cache!.compiler.vocabSize);
    return {
      rows,
      fill: async () => {
        for (let j = 0; j < rows.length; j++) await fillRowBitmask(plan.rows[rows[j]!]!, matchers[j]!, words);
      },
    };
  }
}
