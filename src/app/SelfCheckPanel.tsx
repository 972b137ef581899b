// Shows the result of the worker's kernel self-check (matmul.wgsl's residual accumulate) against its CPU twins.
// Display only; the check runs in the worker (workers/self-check.ts).
import type { SelfCheckResult } from '../protocol/api';

export type SelfCheckState =
  | { status: 'running' }
  | { status: 'pass' | 'fail'; result: SelfCheckResult }
  | { status: 'error'; message: string };

const numPreviewRows = 6;

export function SelfCheckPanel({ state }: { state: SelfCheckState }) {
  return (
    <section data-testid="selfcheck" data-status={state.status} className="panel">
      <h2>Kernel self-check</h2>
      <p>
        <code>shaders/matmul.wgsl</code> (y += x·wᵀ, the model's residual add) on the worker's device vs. its CPU twins:{' '}
        <strong data-testid="selfcheck-status" className={`status-${state.status}`}>
          {state.status}
        </strong>
      </p>
      {state.status === 'error' && <p data-testid="selfcheck-error">{state.message}</p>}
      {(state.status === 'pass' || state.status === 'fail') && <SelfCheckDetails result={state.result} />}
    </section>
  );
}

function SelfCheckDetails({ result }: { result: SelfCheckResult }) {
  return (
    <>
      <dl className="facts">
        <dt>Elements</dt>
        <dd>{result.numElements}</dd>
        <dt>Max |gpu − cpu|</dt>
        <dd data-testid="selfcheck-max-error">{result.maxAbsError}</dd>
        <dt>Padding untouched</dt>
        <dd>{result.paddingIntact ? 'yes' : 'no'}</dd>
        <dt>Elapsed</dt>
        <dd>{result.elapsedMs.toFixed(1)} ms</dd>
      </dl>
      <table className="values">
        <thead>
          <tr>
            <th>i</th>
            <th>a</th>
            <th>b</th>
            <th>a + b (GPU)</th>
          </tr>
        </thead>
        <tbody>
          {result.values.slice(0, numPreviewRows).map((value, i) => (
            <tr key={i}>
              <td>{i}</td>
              <td>{result.a[i]}</td>
              <td>{result.b[i]}</td>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <details>
        <summary>All inputs and outputs (JSON)</summary>
        <pre data-testid="selfcheck-data">{JSON.stringify({ a: result.a, b: result.b, values: result.values })}</pre>
      </details>
    </>
  );
}
