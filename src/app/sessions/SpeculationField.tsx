// The speculation setting of a session: auto (the engine drafts where it pays), off, or a fixed
// number of drafted tokens per step. One select and, when fixed, the length; plain data out.
import { DEFAULT_FIXED_DRAFT_TOKENS, MAX_DRAFT_TOKENS_SETTING, speculationFromForm, speculationMode, type SpeculationSetting } from '../derive/speculation-view';

export function SpeculationField({ value, onChange }: { value: SpeculationSetting; onChange: (value: SpeculationSetting) => void }) {
  const mode = speculationMode(value);
  const length = typeof value === 'object' ? value.maxDraftTokens : DEFAULT_FIXED_DRAFT_TOKENS;
  return (
    <label title="Speculative decoding: drafted tokens (from the prompt and output so far) verified in the batched step; the output is the same either way">
      Speculation
      <span className="speculation-field">
        <select data-testid="setting-speculation" value={mode} onChange={(e) => onChange(speculationFromForm(e.target.value as 'auto' | 'off' | 'fixed', length))}>
          <option value="auto">auto</option>
          <option value="off">off</option>
          <option value="fixed">max drafts</option>
        </select>
        {mode === 'fixed' && (
          <input
            type="number"
            aria-label="Most drafted tokens per step"
            data-testid="setting-maxDraftTokens"
            min={0}
            max={MAX_DRAFT_TOKENS_SETTING}
            step={1}
            value={length}
            onChange={(e) => onChange(speculationFromForm('fixed', e.target.valueAsNumber))}
          />
        )}
      </span>
    </label>
  );
}
