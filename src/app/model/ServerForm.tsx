// The "Server" card: connect the playground to an OpenAI-compatible server (llama-server, vLLM) by
// base URL and optional API key, see what it exposes, and go back to the local model.
import { useState, type FormEvent } from 'react';
import { loadModel } from '../state/model-actions';
import { useModelStore } from '../state/model-store';

const DEFAULT_URL = 'http://127.0.0.1:8080';

export function ServerForm() {
  const model = useModelStore((s) => s.model);
  const loading = useModelStore((s) => s.loading);
  const [baseUrl, setBaseUrl] = useState(DEFAULT_URL);
  const [apiKey, setApiKey] = useState('');
  const server = model?.server;

  function connect(event: FormEvent) {
    event.preventDefault();
    // the key stays in this page's memory and the worker's: never saved with the panes
    void loadModel({ kind: 'server', baseUrl: baseUrl.trim(), ...(apiKey ? { apiKey } : {}) });
  }

  return (
    <details className="card server-card" data-testid="server-card" open={server !== undefined || undefined}>
      <summary>Server {server ? <span className="muted small">· connected</span> : <span className="muted small">· llama-server, vLLM</span>}</summary>
      {server ? (
        <div data-testid="server-info" data-kind={server.kind}>
          <dl className="facts compact">
            <dt>Engine</dt>
            <dd data-testid="server-kind">{server.kind}</dd>
            <dt>Address</dt>
            <dd>{server.baseUrl}</dd>
            {server.numSlots !== undefined && (
              <>
                <dt>Slots</dt>
                <dd data-testid="server-slots">{server.numSlots}</dd>
              </>
            )}
            <dt>Monitoring</dt>
            <dd data-testid="server-endpoints">
              /slots {server.endpoints.slots ? 'yes' : 'no'} · /metrics {server.endpoints.metrics ? 'yes' : 'no'}
            </dd>
          </dl>
          {server.notes.map((note) => (
            <p key={note} className="muted small" data-testid="server-note">
              {note}
            </p>
          ))}
          <button type="button" data-testid="server-disconnect" disabled={loading !== null} onClick={() => void loadModel({ kind: 'embedded' })}>
            Back to the embedded model
          </button>
        </div>
      ) : (
        <form onSubmit={connect} className="server-form">
          <p className="muted small">The server runs the model and batches the sessions; this page streams them and samples its /slots and /metrics for the activity panel.</p>
          <label>
            Base URL
            <input data-testid="server-url" type="url" required value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} placeholder={DEFAULT_URL} />
          </label>
          <label>
            API key <span className="muted small">(optional)</span>
            <input data-testid="server-key" type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} />
          </label>
          <button type="submit" className="primary" data-testid="server-connect" disabled={loading !== null}>
            Connect
          </button>
        </form>
      )}
    </details>
  );
}
