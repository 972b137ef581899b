// The top bar: product name, the serving model and GPU in one line each, and the mode switch.
// Display only; figures come from the model and telemetry stores.
import { formatBytes, formatCount } from './derive/model-sources';
import { ModeSwitch } from './cohort/ModeSwitch';
import { useModelStore } from './state/model-store';

function ModelSummary() {
  const model = useModelStore((s) => s.model);
  const loading = useModelStore((s) => s.loading);
  if (!model) {
    return <span className="summary muted">{loading ? `Loading ${loading.label}…` : 'No model loaded'}</span>;
  }
  return (
    <span className="summary" data-testid="header-model" title={model.dtypes.join(', ')}>
      <strong>{model.name}</strong>
      <span className="muted">
        {model.arch} · {formatCount(model.numParams)} params · {model.numLayers} layers · {formatBytes(model.weightBytes)} · KV {model.numBlocks}×{model.blockSize}
      </span>
      {loading && <span className="pill pill-busy">loading {loading.label}…</span>}
    </span>
  );
}

function GpuSummary() {
  const gpu = useModelStore((s) => s.gpu);
  if (gpu.status !== 'ok') return <span className="summary muted">GPU: {gpu.status === 'pending' ? 'asking…' : 'unavailable'}</span>;
  const a = gpu.adapter;
  const name = [a.vendor, a.architecture].filter(Boolean).join(' ') || a.description || 'GPU';
  return (
    <span className="summary muted" data-testid="header-gpu">
      GPU: {name}
      {a.isFallbackAdapter ? ' (software)' : ''} · f16 {gpu.deviceFeatures.includes('shader-f16') ? 'on' : 'off'}
    </span>
  );
}

export function Header() {
  return (
    <header className="topbar">
      <h1 className="brand">Cohort</h1>
      <div className="topbar-info">
        <ModelSummary />
        <GpuSummary />
      </div>
      <ModeSwitch />
    </header>
  );
}
