// The "KV memory" card: how the next load stores K and V (f32, f16, q8_0) and how many bytes its
// pool may take (blank: the device's default), with a reload to apply them. Figures: kv-figures.ts.
import { useState, type FormEvent } from 'react';
import { DEFAULT_KV_CACHE_TYPE, KV_CACHE_TYPES, type KvCacheType } from '../../model/kv-types';
import { reloadModel, setKvOptions } from '../state/model-actions';
import { useModelStore } from '../state/model-store';
import { parseBudgetMiB } from './kv-figures';

const TYPE_NOTES: Record<KvCacheType, string> = {
  f32: 'f32 — 4 bytes a value, as computed',
  f16: 'f16 — 2 bytes a value (default)',
  q8_0: 'q8_0 — 34 bytes per 32 values',
};

export function KvMemoryForm() {
  const kv = useModelStore((s) => s.kv);
  const loading = useModelStore((s) => s.loading);
  const serving = useModelStore((s) => s.model);
  const [budget, setBudget] = useState(kv.kvCacheBytes ? String(kv.kvCacheBytes / 2 ** 20) : '');
  const parsed = parseBudgetMiB(budget);

  function apply(event: FormEvent) {
    event.preventDefault();
    if (!parsed.ok) return;
    void reloadModel();
  }

  function chooseType(type: KvCacheType) {
    setKvOptions({ ...kv, kvCacheType: type });
  }

  function chooseBudget(text: string) {
    setBudget(text);
    const next = parseBudgetMiB(text);
    if (next.ok) setKvOptions({ ...(kv.kvCacheType ? { kvCacheType: kv.kvCacheType } : {}), ...(next.bytes !== undefined ? { kvCacheBytes: next.bytes } : {}) });
  }

  return (
    <details className="card" data-testid="kv-memory">
      <summary>
        KV memory <span className="muted small">· {kv.kvCacheType ?? DEFAULT_KV_CACHE_TYPE}, {kv.kvCacheBytes ? `${kv.kvCacheBytes / 2 ** 20} MiB` : 'device default'}</span>
      </summary>
      <form className="source-form" onSubmit={apply}>
        <label>
          Storage type
          <select data-testid="kv-cache-type" value={kv.kvCacheType ?? DEFAULT_KV_CACHE_TYPE} onChange={(e) => chooseType(e.target.value as KvCacheType)}>
            {KV_CACHE_TYPES.map((type) => (
              <option key={type} value={type}>
                {TYPE_NOTES[type]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Pool budget (MiB)
          <input data-testid="kv-cache-mib" inputMode="numeric" placeholder="device default" value={budget} onChange={(e) => chooseBudget(e.target.value)} aria-invalid={!parsed.ok} />
        </label>
        {!parsed.ok && (
          <p className="status-error small" role="alert" data-testid="kv-cache-error">
            {parsed.error}
          </p>
        )}
        <p className="muted small">
          Used by every load from now on. The default is half the GPU&apos;s largest buffer, at most 2 GiB (512 MiB on a CPU adapter).
        </p>
        <button type="submit" data-testid="kv-apply" disabled={!parsed.ok || loading !== null || serving?.server !== undefined}>
          {serving ? `Reload ${serving.name} with these` : 'Load with these'}
        </button>
      </form>
    </details>
  );
}
