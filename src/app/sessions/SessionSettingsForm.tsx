// Settings of one session (system prompt, temperature, top-p, top-k, max tokens, seed, penalties,
// logit bias, response format, logprobs, speculation): editable between turns; session-actions.ts applies a change to the next turn.
import { useId } from 'react';
import { LOGIT_BIAS_LIMIT, MAX_REPETITION_PENALTY, MAX_TOP_LOGPROBS, parseLogitBias, PENALTY_LIMIT, type SessionSettings } from '../derive/session-settings';
import { ResponseFormatField } from './ResponseFormatField';
import { SpeculationField } from './SpeculationField';

interface NumberField {
  key: 'temperature' | 'topP' | 'topK' | 'maxNewTokens' | 'frequencyPenalty' | 'presencePenalty' | 'repetitionPenalty';
  label: string;
  min: number;
  max: number;
  step: number;
  title?: string;
}

const NUMBER_FIELDS: NumberField[] = [
  { key: 'temperature', label: 'Temperature', min: 0, max: 2, step: 0.05 },
  { key: 'topP', label: 'Top-p', min: 0.01, max: 1, step: 0.01 },
  { key: 'topK', label: 'Top-k (0 = off)', min: 0, max: 1000, step: 1 },
  { key: 'maxNewTokens', label: 'Max tokens', min: 1, max: 4096, step: 1 },
];

const PENALTY_FIELDS: NumberField[] = [
  { key: 'frequencyPenalty', label: 'Frequency penalty', min: -PENALTY_LIMIT, max: PENALTY_LIMIT, step: 0.1, title: "OpenAI's frequency_penalty: lowers a token's logit per time it occurs in the reply so far (0 = off)" },
  { key: 'presencePenalty', label: 'Presence penalty', min: -PENALTY_LIMIT, max: PENALTY_LIMIT, step: 0.1, title: "OpenAI's presence_penalty: lowers the logit of every token the reply already holds (0 = off)" },
  { key: 'repetitionPenalty', label: 'Repetition penalty', min: 0.05, max: MAX_REPETITION_PENALTY, step: 0.05, title: 'As llama.cpp and vLLM define it, over prompt and reply tokens (1 = off)' },
];

function clamp(value: number, field: NumberField): number {
  return Math.min(field.max, Math.max(field.min, field.step === 1 ? Math.round(value) : value));
}

function NumberInput({ field, settings, onChange }: { field: NumberField; settings: SessionSettings; onChange: (settings: SessionSettings) => void }) {
  return (
    <label title={field.title}>
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
  );
}

function LogprobsField({ settings, onChange }: { settings: SessionSettings; onChange: (settings: SessionSettings) => void }) {
  const on = settings.logprobs !== null;
  return (
    <label title="Return each token's log-probability and the most likely alternatives; the reply can then be shaded by probability">
      Logprobs
      <span className="logprobs-field">
        <input type="checkbox" data-testid="setting-logprobs" aria-label="Return logprobs" checked={on} onChange={(e) => onChange({ ...settings, logprobs: e.target.checked ? 5 : null })} />
        <input
          type="number"
          data-testid="setting-topLogprobs"
          aria-label={`Top alternatives per token (0-${MAX_TOP_LOGPROBS})`}
          title={`Top alternatives per token (0-${MAX_TOP_LOGPROBS})`}
          min={0}
          max={MAX_TOP_LOGPROBS}
          step={1}
          disabled={!on}
          value={settings.logprobs ?? 5}
          onChange={(e) => {
            const value = e.target.valueAsNumber;
            if (Number.isFinite(value)) onChange({ ...settings, logprobs: Math.min(MAX_TOP_LOGPROBS, Math.max(0, Math.round(value))) });
          }}
        />
      </span>
    </label>
  );
}

function LogitBiasField({ settings, onChange }: { settings: SessionSettings; onChange: (settings: SessionSettings) => void }) {
  const errorId = useId();
  const parsed = parseLogitBias(settings.logitBias);
  const problem = 'error' in parsed ? parsed.error : null;
  return (
    <>
      <label className="wide" title={`Token id: bias pairs, the bias from -${LOGIT_BIAS_LIMIT} (never) to ${LOGIT_BIAS_LIMIT} (always), added to the token's logit`}>
        Logit bias
        <input type="text" spellCheck={false} data-testid="setting-logitBias" placeholder="token id: bias, e.g. 13: -100, 42: 5" aria-invalid={problem !== null} aria-describedby={problem ? errorId : undefined} value={settings.logitBias} onChange={(e) => onChange({ ...settings, logitBias: e.target.value })} />
      </label>
      {problem && (
        <p className="field-error wide" id={errorId} role="alert" data-testid="setting-logitBias-error">
          {problem}
        </p>
      )}
    </>
  );
}

export function SessionSettingsForm({ settings, onChange, disabled = false }: { settings: SessionSettings; onChange: (settings: SessionSettings) => void; disabled?: boolean }) {
  return (
    <fieldset className="settings" disabled={disabled} data-testid="session-settings">
      <label className="wide">
        System prompt
        <textarea rows={2} data-testid="setting-systemPrompt" value={settings.systemPrompt} placeholder="(none)" onChange={(e) => onChange({ ...settings, systemPrompt: e.target.value })} />
      </label>
      {NUMBER_FIELDS.map((field) => (
        <NumberInput key={field.key} field={field} settings={settings} onChange={onChange} />
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
      {PENALTY_FIELDS.map((field) => (
        <NumberInput key={field.key} field={field} settings={settings} onChange={onChange} />
      ))}
      <LogitBiasField settings={settings} onChange={onChange} />
      <LogprobsField settings={settings} onChange={onChange} />
      <ResponseFormatField settings={settings} onChange={onChange} />
    </fieldset>
  );
}
