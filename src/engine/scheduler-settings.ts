// The scheduler's settings: what the engine sets on it (configure()), their defaults and their one
// check. Not how they are used (scheduler.ts) nor the step-time budget's own bounds (step-budget.ts).
import type { ConstraintCache } from './constraints';
import type { EngineMode } from './events';
import { DEFAULT_SPECULATION, type Speculation } from './speculation';
import type { StepBudget } from './step-budget';

/** What the engine sets on its scheduler (configure()); read back through `settings`. */
export interface SchedulerSettings {
  /** Token budget of one step, all rows together. */
  maxTokensPerStep: number;
  /** Row cap of one step in batched mode (serialized mode uses 1). */
  maxRows: number;
  mode: EngineMode;
  /** Step-time budget; null = off, and chunks are sized by the token budget alone. */
  stepBudget: StepBudget | null;
  /** The runner's maxDraftTokens (0: no drafts are ever sent). */
  maxDraftTokens: number;
  /** Engine-wide speculation; each request's own setting applies under it. */
  speculation: Speculation;
}

export interface SchedulerConfig extends Partial<SchedulerSettings> {
  maxTokensPerStep: number;
  maxRows: number;
  /** Positions one request may reach (the model's or runner's context); default: the KV pool. */
  maxContextTokens?: number;
  /** Compiles requests' output constraints (absent: a constrained request ends with an error). */
  constraints?: ConstraintCache | null;
}

/** The settings a scheduler starts with: the config's, defaults for the rest. */
export function initialSettings(config: SchedulerConfig): SchedulerSettings {
  const { maxTokensPerStep, maxRows } = config;
  return changedSettings({ maxTokensPerStep, maxRows, mode: 'batched', stepBudget: null, maxDraftTokens: 0, speculation: DEFAULT_SPECULATION }, config);
}

/** `current` with the defined `changes`; the token budget and row cap must stay >= 1 (values are otherwise the caller's to check). */
export function changedSettings(current: SchedulerSettings, changes: Partial<SchedulerSettings>): SchedulerSettings {
  const next = { ...current };
  for (const key of SETTING_KEYS) if (changes[key] !== undefined) Object.assign(next, { [key]: changes[key] });
  if (!(next.maxTokensPerStep >= 1 && next.maxRows >= 1)) throw new RangeError('token budget and row cap must be >= 1');
  return next;
}

const SETTING_KEYS: readonly (keyof SchedulerSettings)[] = ['maxTokensPerStep', 'maxRows', 'mode', 'stepBudget', 'maxDraftTokens', 'speculation'];
