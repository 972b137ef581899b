// Batched vs serialized serving: the switch calls setMode; the badge shows the mode the latest
// StepEvent reports (data-testid="engine-mode"), which is what the engine actually ran.
import type { EngineMode } from '../../protocol/events';
import { setMode } from '../state/compare-actions';
import { useTelemetryStore } from '../state/telemetry-store';

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
    </div>
  );
}
