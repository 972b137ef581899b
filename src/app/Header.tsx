// The top bar: product name, the serving model, what it can do and the GPU in one line each,
// live tok/s and speed-up, and the mode switch. Display only; figures come from the stores.
import { formatBytes, formatCount } from './derive/model-sources';
import { EMBEDDED_MODEL_SKILLS, isEmbeddedModel } from './derive/example-prompts';
import { LiveThroughput } from './cohort/LiveThroughput';
import { ModeSwitch } from './cohort/ModeSwitch';
import { useLayoutStore } from './state/layout-store';
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

/** One line on what the embedded model is for, where a person looks first. */
function ModelSkills() {
  const embedded = useModelStore((s) => isEmbeddedModel(s.model?.name));
  if (!embedded) return null;
  return (
    <span className="summary skills-line" data-testid="header-skills" title={EMBEDDED_MODEL_SKILLS}>
      Finds a code hidden in a long text (needle in a haystack); it cannot chat.
    </span>
  );
}

function DrawerButton() {
  const open = useLayoutStore((s) => s.drawerOpen);
  const setOpen = useLayoutStore((s) => s.setDrawerOpen);
  return (
    <button type="button" className="drawer-button" aria-expanded={open} aria-controls="sidebar" data-testid="drawer-toggle" onClick={() => setOpen(!open)}>
      ☰ Model
    </button>
  );
}

export function Header() {
  return (
    <header className="topbar">
      <DrawerButton />
      <h1 className="brand">Cohort</h1>
      <div className="topbar-info">
        <ModelSummary />
        <ModelSkills />
        <GpuSummary />
      </div>
      <LiveThroughput />
      <ModeSwitch />
    </header>
  );
}
