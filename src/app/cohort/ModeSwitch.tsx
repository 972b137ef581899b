// Batched vs serialized serving and the step-time budget: the switch calls setMode, the select
// setStepBudget; the badges show what the latest StepEvent reports, which is what the engine ran.
import { useState } from 'react';
import type { EngineMode } from '../../protocol/events';
import { setMode, setStepMultiple } from '../state/compare-actions';
import { useModelStore } from '../state/model-store';
import { useTelemetryStore } from '../state/telemetry-store';

/** Multiples of the decode step a prefill step may cost ('off': the token budget alone). The first is the engine's default (DEFAULT_STEP_BUDGET). */
const BUDGET_CHOICES = ['1.5', '2', '4', '8', 'off'] as const;

function StepBudgetSelect() {
  const [choice, setChoice] = useState<string>(BUDGET_CHOICES[0]);
  const onServer = useModelStore((s) => s.model?.server !== undefined);
  const budget = useTelemetryStore((s) => s.latest?.stepBudget);
  const shown = budget?.targetMs !== undefined && budget.predictedMs !== undefined ? `budget ${budget.targetMs.toFixed(0)} ms, planned ${budget.predictedMs.toFixed(0)} ms` : undefined;
  return (
    <label className="inline small step-budget" title={onServer ? 'A server sizes its own steps' : 'How much longer than a decode-only step a step carrying prompt tokens may take, so a long prompt does not freeze decoding sessions'}>
      step budget
      <select
        aria-label="Step-time budget"
        data-testid="step-budget"
        value={choice}
        disabled={onServer}
        onChange={(e) => {
          setChoice(e.target.value);
          void setStepMultiple(e.target.value === 'off' ? null : Number(e.target.value));
        }}
      >
        {BUDGET_CHOICES.map((c) => (
          <option key={c} value={c}>
            {c === 'off' ? 'off' : `${c}× decode`}
          </option>
        ))}
      </select>
      {shown && (
        <span className="muted" data-testid="step-budget-last">
          {shown}
        </span>
      )}
    </label>
  );
}

const MODES: { mode: EngineMode; label: string; hint: string }[] = [
  { mode: 'batched', label: 'Batched', hint: 'every active session rides in each step' },
  { mode: 'serialized', label: 'Serialized', hint: 'one session at a time, to completion, in arrival order' },
];

export function ModeSwitch() {
  const requested = useTelemetryStore((s) => s.requestedMode);
  const reported = useTelemetryStore((s) => s.latest?.mode ?? null);
  return (
    <div className="mode">
      <div className="segmented" role="group" aria-label="Serving mode" data-testid="mode-switch" data-mode={requested}>
        {MODES.map(({ mode, label, hint }) => (
          <button key={mode} type="button" title={hint} aria-pressed={requested === mode} onClick={() => void setMode(mode)}>
            {label}
          </button>
        ))}
      </div>
      <span className="engine-mode" title="Mode of the latest engine step" data-testid="engine-mode" data-mode={reported ?? ''}>
        {reported ? `engine: ${reported}` : 'engine: idle'}
      </span>
      <StepBudgetSelect />
    </div>
  );
}
