// The left column: the serving model, where to load another from, load progress and errors,
// the download cache, and the GPU report with the kernel self-check.
import { GpuReport } from '../GpuReport';
import { SelfCheckPanel } from '../SelfCheckPanel';
import { formatBytes, formatCount } from '../derive/model-sources';
import { dismissModelError, dismissNotice, restartEngine } from '../state/model-actions';
import { useModelStore } from '../state/model-store';
import { LoadProgressBars } from './LoadProgressBars';
import { ModelCacheList } from './ModelCacheList';
import { ModelSourceForm } from './ModelSourceForm';
import './model.css';

function ModelCard() {
  const model = useModelStore((s) => s.model);
  const loading = useModelStore((s) => s.loading);
  const state = model ? 'ready' : loading ? 'loading' : 'none';
  return (
    <section className="card" data-testid="model-info" data-state={state} data-model-name={model?.name ?? ''}>
      <h2>Model</h2>
      {model ? (
        <dl className="facts compact">
          <dt>Name</dt>
          <dd data-testid="model-name">{model.name}</dd>
          <dt>Architecture</dt>
          <dd>
            {model.arch}, {model.numLayers} layers, hidden {model.hiddenSize}
          </dd>
          <dt>Parameters</dt>
          <dd>
            {formatCount(model.numParams)} ({formatBytes(model.weightBytes)}, {model.dtypes.join(' ')})
          </dd>
          <dt>Vocabulary</dt>
          <dd>{model.vocabSize.toLocaleString('en-US')}</dd>
          <dt>Context</dt>
          <dd>{model.maxPositionEmbeddings.toLocaleString('en-US')} positions</dd>
          <dt>KV pool</dt>
          <dd>
            {model.numBlocks} blocks × {model.blockSize} positions
          </dd>
          {model.templateNote && (
            <>
              <dt>Template</dt>
              <dd className="muted">{model.templateNote}</dd>
            </>
          )}
        </dl>
      ) : (
        <p className="muted">{loading ? `Loading ${loading.label}…` : 'No model loaded yet.'}</p>
      )}
    </section>
  );
}

function ModelError() {
  const error = useModelStore((s) => s.error);
  if (!error) return null;
  return (
    <div className="error-box" role="alert" data-testid="model-error">
      <span>{error}</span>
      <button type="button" className="link" onClick={dismissModelError} aria-label="Dismiss error">
        dismiss
      </button>
    </div>
  );
}

function WorkerDeadBox() {
  const message = useModelStore((s) => s.workerDead);
  if (!message) return null;
  return (
    <div className="error-box" role="alert" data-testid="worker-dead">
      <span>{message}</span>
      <button type="button" className="primary" data-testid="restart-engine" onClick={restartEngine}>
        Restart engine
      </button>
    </div>
  );
}

function EngineNoticeBox() {
  const notice = useModelStore((s) => s.notice);
  if (!notice) return null;
  return (
    <div className={notice.kind === 'gpu-restored' ? 'notice-box' : 'error-box'} role="status" data-testid="engine-notice" data-kind={notice.kind}>
      <span>{notice.message}</span>
      {notice.kind !== 'gpu-lost' && (
        <button type="button" className="link" onClick={dismissNotice} aria-label="Dismiss notice">
          dismiss
        </button>
      )}
    </div>
  );
}

function GpuSection() {
  const gpu = useModelStore((s) => s.gpu);
  const selfCheck = useModelStore((s) => s.selfCheck);
  return (
    <>
      {gpu.status === 'ok' ? <GpuReport info={gpu} /> : <p data-testid="gpu-pending">Asking the engine worker for a GPU adapter…</p>}
      <SelfCheckPanel state={selfCheck} />
    </>
  );
}

export function ModelSidebar() {
  return (
    <aside className="sidebar">
      <ModelCard />
      <WorkerDeadBox />
      <EngineNoticeBox />
      <ModelError />
      <LoadProgressBars />
      <ModelSourceForm />
      <ModelCacheList />
      <GpuSection />
    </aside>
  );
}
