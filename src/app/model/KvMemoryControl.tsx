// The model panel's KV memory control: how the next load stores K and V (f16, q8_0, f32) and how
// large its pool is (MiB, empty = sized from the GPU). Not the figures of the loaded pool (ModelCard).
import { KV_CACHE_TYPES, type KvCacheType } from '../../protocol/kv-options';
import { setKvControl } from '../state/model-actions';
import { useModelStore } from '../state/model-store';

const TYPE_LABELS: Record<KvCacheType, string> = {
  f16: 'f16 (default)',
  q8_0: 'q8_0 (about half of f16)',
  f32: 'f32 (twice f16)',
};

export function KvMemoryControl() {
  const control = useModelStore((s) => s.kvControl);
  const busy = useModelStore((s) => s.loading !== null);
  return (
    <section className="card" data-testid="kv-memory" aria-labelledby="kv-memory-title">
      <h2 id="kv-memory-title">KV memory</h2>
      <div className="source-form">
        <label htmlFor="kv-cache-type">KV cache type</label>
        <select id="kv-cache-type" data-testid="kv-cache-type" value={control.kvCacheType} disabled={busy} onChange={(e) => setKvControl({ kvCacheType: e.target.value as KvCacheType })}>
          {KV_CACHE_TYPES.map((type) => (
            <option key={type} value={type}>
              {TYPE_LABELS[type]}
            </option>
          ))}
        </select>
        <label htmlFor="kv-cache-mib">KV pool size (MiB)</label>
        <input
          id="kv-cache-mib"
          data-testid="kv-cache-mib"
          type="number"
          min={1}
          step={1}
          inputMode="numeric"
          placeholder="from the GPU"
          aria-describedby="kv-memory-hint"
          value={control.sizeMib}
          disabled={busy}
          onChange={(e) => setKvControl({ sizeMib: e.target.value })}
        />
        <p id="kv-memory-hint" className="muted small">
          Takes effect at the next load. Empty: as much as the GPU's largest buffer allows, less the weights.
        </p>
      </div>
    </section>
  );
}
