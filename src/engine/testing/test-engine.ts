// The engine tests' one harness: makeEngine (a manually stepped EngineCore on a FakeRunner, a byte
// tokenizer and a clock the test owns), the one prompt generator, and ClockedRunner. Test-only.
import { EngineCore, type EngineCoreOptions } from '../engine-core';
import { numSampledPositions } from '../sampled-positions';
import { attendedPositions } from '../step-cost';
import type { ModelRunner, StepMaskFill, StepPlan, StepResult } from '../types';
import { FakeRunner, type FakeRunnerOptions } from './fake-runner';
import { RunnerWrapper } from './runner-wrapper';
import { ByteTokenizer, PlainChatTemplate } from './test-support';

export interface TestEngineOptions extends Partial<EngineCoreOptions> {
  /** The FakeRunner's options where no `runner` is given. */
  fake?: FakeRunnerOptions;
}

/**
 * An EngineCore for tests: manual steps unless `manualSteps: false`; the runner given, or a
 * FakeRunner of `fake`; and never the wall clock: a ClockedRunner's clock, or else one that moves
 * 1 ms each time the engine reads it, so nothing a test asserts depends on the machine's speed.
 */
export function makeEngine(options: TestEngineOptions = {}): EngineCore {
  const { fake, ...engineOptions } = options;
  const runner = engineOptions.runner ?? new FakeRunner(fake);
  let ms = 0;
  const now = runner instanceof ClockedRunner ? runner.now : () => ms++;
  return new EngineCore({ tokenizer: new ByteTokenizer(), chatTemplate: new PlainChatTemplate(), manualSteps: true, now, ...engineOptions, runner });
}

/** `length` prompt token ids in first..first+vocab-1, varied along the prompt and by `salt` (no two salts below vocab agree anywhere). */
export function promptTokens(length: number, salt: number, vocab = 90, first = 32): number[] {
  return Array.from({ length }, (_, i) => first + ((i * 13 + salt * 7 + ((i * i) % 5)) % vocab));
}

/**
 * What one step costs on a ClockedRunner's clock: fixedMs + perTokenMs·tokens + perRowMs·rows +
 * perAttendedMs·attended positions + perSampledMs·sampled positions (logits and sampling: a prompt
 * chunk samples once, a verify row after each draft too, which the engine's cost model does not price).
 */
export interface SimulatedStepCost {
  fixedMs: number;
  perTokenMs: number;
  perRowMs?: number;
  perAttendedMs?: number;
  perSampledMs?: number;
}

/** A runner on a simulated clock: each execute() advances `nowMs` by the plan's SimulatedStepCost, then runs the inner runner. */
export class ClockedRunner extends RunnerWrapper {
  nowMs = 0;
  /** The clock to give the engine (makeEngine does). */
  readonly now = (): number => this.nowMs;

  constructor(
    readonly cost: SimulatedStepCost,
    inner: ModelRunner = new FakeRunner(),
  ) {
    super(inner);
  }

  /** The simulated ms a plan costs. */
  costOf(plan: StepPlan): number {
    const k = this.cost;
    const numTokens = plan.rows.reduce((n, row) => n + row.tokenIds.length, 0);
    let ms = k.fixedMs + k.perTokenMs * numTokens + (k.perRowMs ?? 0) * plan.rows.length;
    for (const row of plan.rows) ms += (k.perAttendedMs ?? 0) * attendedPositions(row.startPos, row.tokenIds.length) + (k.perSampledMs ?? 0) * numSampledPositions(row);
    return ms;
  }

  override execute(plan: StepPlan, masks?: StepMaskFill): Promise<StepResult> {
    this.nowMs += this.costOf(plan);
    return this.inner.execute(plan, masks);
  }
}
