// The left column: the serving model (its KV pool's figures too), where to load another from and with what KV memory, load progress and errors,
// the download cache, and the GPU report with the kernel self-check.
import { useCallback } from 'react';
import { GpuReport } from '../GpuReport';
import { SelfCheckPanel } from '../SelfCheckPanel';
import { attentionLayersText } from '../derive/attention-layers';
import { kvCardFigures } from '../derive/kv-memory';
import { formatBytes, formatCount } from '../derive/model-sources';
import { dismissModelError, dismissNotice, restartEngine } from '../state/model-actions';
import { useLayoutStore } from '../state/layout-store';
import { useModelStore } from '../state/model-store';
import { useEscape } from '../use-escape';
import type { ModelInfo } from '../../protocol/api';
import { KvMemoryControl } from './KvMemoryControl';
import { LoadProgressBars } from './LoadProgressBars';
import { ModelCacheList } from './ModelCacheList';
import { ModelSourceForm } from './ModelSourceForm';
import { ServerForm } from './ServerForm';
import './model.css';

function ModelCard() {
  const model = useModelStore((s) => s.model);
  const loading = useModelStore((s) => s.loading);
  const state = model ? 'ready' : loading ? 'loading' : 'none';
  return (
    <section className="card" data-testid="model-info" data-state={state} data-loading={loading ? 'true' : 'false'} data-model-name={model?.name ?? ''}>
      <h2>Model</h2>
      {model?.server ? (
        <dl className="facts compact">
          <dt>Name</dt>
          <dd data-testid="model-name">{model.name}</dd>
          <dt>Served by</dt>
          <dd>
            {model.server.kind} at {model.server.baseUrl}
          </dd>
          <dt>Context</dt>
          <dd>{model.contextTokens > 0 ? `${model.contextTokens.toLocaleString('en-US')} tokens per request` : 'not reported'}</dd>
        </dl>
      ) : model ? (
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
          <TokenFacts model={model} />
          <AttentionFacts model={model} />
          <KvFacts model={model} />
          {model.templateNote && (
            <>
              <dt>Template</dt>
              <dd className="muted">{model.templateNote}</dd>
            </>
          )}
          {model.toolsRendering && (
            <>
              <dt>Tools</dt>
              <dd>{model.toolsRendering === 'template' ? "through the chat template's tools" : 'listed in the system prompt (the template has no tools)'}</dd>
            </>
          )}
          {model.toolCallFormat !== undefined && (
            <>
              <dt>Tool calls</dt>
              <dd>{toolCallFormatText(model.toolCallFormat)}</dd>
            </>
          )}
        </dl>
      ) : (
        <p className="muted">{loading ? `Loading ${loading.label}…` : 'No model loaded yet.'}</p>
      )}
    </section>
  );
}

/** Where generation ends, and the tokens set aside at load (ids past the embedding rows). */
function TokenFacts({ model }: { model: ModelInfo }) {
  const label = (t: { id: number; content: string }) => `${t.id} ${t.content}`;
  return (
    <>
      {model.endTokens && (
        <>
          <dt>Ends on</dt>
          <dd data-testid="end-tokens">{model.endTokens.length > 0 ? model.endTokens.map(label).join(', ') : 'no token (max tokens only)'}</dd>
        </>
      )}
      {model.setAsideTokens && (
        <>
          <dt>Set aside</dt>
          <dd data-testid="set-aside-tokens" className="muted">
            {model.setAsideTokens.map(label).join(', ')}: past the model's {model.vocabSize.toLocaleString('en-US')} embedding rows, never produced or matched in text
          </dd>
        </>
      )}
    </>
  );
}

/** Sliding-window models (gemma): which layers are local, and their window. */
function AttentionFacts({ model }: { model: ModelInfo }) {
  const text = attentionLayersText(model.layerWindows);
  if (!text) return null;
  const pool = model.kvGroups?.find((group) => group.window !== null);
  return (
    <>
      <dt>Attention</dt>
      <dd data-testid="attention-layers">{text}</dd>
      <dt>Window pool</dt>
      <dd data-testid="kv-window-pool">
        {pool ? `${pool.numBlocks} blocks for the local layers: positions past the window go back to it` : 'none: every position of every layer kept'}
      </dd>
    </>
  );
}

function KvFacts({ model }: { model: ModelInfo }) {
  const kv = kvCardFigures(model);
  return (
    <>
      <dt>KV pool</dt>
      <dd data-testid="kv-pool">
        {model.numBlocks} blocks × {model.blockSize} positions, {kv.kvCacheType ?? '?'}, {formatBytes(kv.poolBytes)}
      </dd>
      <dt>KV per token</dt>
      <dd data-testid="kv-bytes-per-token">{kv.bytesPerToken.toLocaleString('en-US')} bytes</dd>
      <dt>Sessions that fit</dt>
      <dd data-testid="kv-sessions">{kv.sessions.map((s) => `${s.count.toLocaleString('en-US')} of ${s.tokens / 1024}k tokens`).join(', ')}</dd>
    </>
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

/** Diagnostics fold away: most people never need 40 device limits, but they stay one click off. */
function GpuSection() {
  const gpu = useModelStore((s) => s.gpu);
  const selfCheck = useModelStore((s) => s.selfCheck);
  return (
    <details className="card diagnostics" data-testid="gpu-diagnostics">
      <summary>
        GPU diagnostics <span className={`muted small status-${selfCheck.status}`}>· self-check {selfCheck.status}</span>
      </summary>
      {gpu.status === 'ok' ? <GpuReport info={gpu} /> : <p data-testid="gpu-pending">Asking the engine worker for a GPU adapter…</p>}
      <SelfCheckPanel state={selfCheck} />
    </details>
  );
}

export function ModelSidebar() {
  const open = useLayoutStore((s) => s.drawerOpen);
  const setOpen = useLayoutStore((s) => s.setDrawerOpen);
  const close = useCallback(() => setOpen(false), [setOpen]);
  useEscape(open, close);
  return (
    <>
      {open && <button type="button" className="drawer-backdrop" aria-label="Close the model panel" onClick={close} />}
      <Sidebar open={open} />
    </>
  );
}

function Sidebar({ open }: { open: boolean }) {
  return (
    <aside className={`sidebar${open ? ' open' : ''}`} id="sidebar" aria-label="Model and GPU">
      <ModelCard />
      <WorkerDeadBox />
      <EngineNoticeBox />
      <ModelError />
      <LoadProgressBars />
      <ModelSourceForm />
      <KvMemoryControl />
      <ServerForm />
      <ModelCacheList />
      <GpuSection />
    </aside>
  );
}

/** What tool_choice 'auto' does on this model, by its call format. */
function toolCallFormatText(format: ModelInfo['toolCallFormat']): string {
  switch (format) {
    case 'hermes':
      return "<tool_call> tags; under 'auto' a call is held to its tool's schema";
    case 'llama3-json':
      return "Llama 3.1's JSON; under 'auto' a call is held to its tool's schema";
    case 'plain-json':
      return "JSON replies; under 'auto' a call is held to its tool's schema";
    default:
      return "a format Cohort does not know: 'auto' is unconstrained (calls are still read)";
  }
}
