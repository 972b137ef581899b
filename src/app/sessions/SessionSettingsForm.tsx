// Sampling settings of one session (system prompt, temperature, top-p, top-k, max tokens,
// seed, speculation): editable between turns; session-actions.ts applies a change to the next turn.
import type { SessionSettings } from '../derive/session-view';
import { SpeculationField } from './SpeculationField';

interface NumberField {
  key: 'temperature' | 'topP' | 'topK' | 'maxNewTokens';
  label: string;
  min: number;
  max: number;
  step: number;
}

const NUMBER_FIELDS: NumberField[] = [
  { key: 'temperature', label: 'Temperature', min: 0, max: 2, step: 0.05 },
  { key: 'topP', label: 'Top-p', min: 0.01, max: 1, step: 0.01 },
  { key: 'topK', label: 'Top-k (0 = off)', min: 0, max: 1000, step: 1 },
  { key: 'maxNewTokens', label: 'Max tokens', min: 1, max: 4096, step: 1 },
];

function clamp(value: number, field: NumberField): number {
  return Math.min(field.max, Math.max(field.min, field.step === 1 ? Math.round(value) : value));
}

export function SessionSettingsForm({ settings, onChange, disabled = false }: { settings: SessionSettings; onChange: (settings: SessionSettings) => void; disabled?: boolean }) {
  return (
    <fieldset className="settings" disabled={disabled} data-testid="session-settings">
      <label className="wide">
        System prompt
        <textarea rows={2} data-testid="setting-systemPrompt" value={settings.systemPrompt} placeholder="(none)" onChange={(e) => onChange({ ...settings, systemPrompt: e.target.value })} />
      </label>
      {NUMBER_FIELDS.map((field) => (
        <label key={field.key}>
          {field.label}
          <input
            type="number"
            data-testid={`setting-${field.key}`}
            min={field.min}
            max={field.max}
            step={field.step}
            value={settings[field.key]}
            onChange={(e) => {
              const value = e.target.valueAsNumber;
              if (Number.isFinite(value)) onChange({ ...settings, [field.key]: clamp(value, field) });
            }}
          />
        </label>
      ))}
      <label>
        Seed
        <input
          type="number"
          data-testid="setting-seed"
          min={0}
          step={1}
          placeholder="auto"
          value={settings.seed ?? ''}
          onChange={(e) => {
            const value = e.target.valueAsNumber;
            onChange({ ...settings, seed: Number.isFinite(value) ? Math.max(0, Math.floor(value)) : null });
          }}
        />
      </label>
      <SpeculationField value={settings.speculation} onChange={(speculation) => onChange({ ...settings, speculation })} />
    </fieldset>
  );
}
