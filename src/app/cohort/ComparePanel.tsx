// The batched-vs-serialized comparison: runs the same prompts both ways and shows each side's
// decode tok/s (decode-only steps, as the benchmark counts) and the ratio. The run itself is state/compare-actions.ts.
import { useState } from 'react';
import type { DecodeThroughput } from '../../protocol/metrics';
import { runCompare } from '../state/compare-actions';
import { useModelStore } from '../state/model-store';
import { useRunsStore } from '../state/runs-store';

function detail(rate: DecodeThroughput | undefined, unit: string): string | undefined {
  return rate && `${rate.decodeTokens} decode tokens in ${rate.forwardPasses} decode-only ${unit}, ${(rate.decodeMs / 1000).toFixed(2)} s`;
}

export function ComparePanel() {
  const compare = useRunsStore((s) => s.compare);
  const hasModel = useModelStore((s) => s.model !== null);
  const onServer = useModelStore((s) => s.model?.server !== undefined);
  // a server shows no steps: its rates are over the page's samples of its streams
  const unit = onServer ? 'samples' : 'steps';
  const [numPrompts, setNumPrompts] = useState(4);
  const running = compare.status === 'running';
  return (
    <section className="side-card" data-testid="compare" data-status={compare.status}>
      <div className="card-head">
        <h3>Batched vs serialized</h3>
      </div>
      <div className="row">
        <button type="button" data-testid="compare-modes" disabled={!hasModel || running} onClick={() => void runCompare(numPrompts)}>
          {running ? 'Comparing…' : 'Compare'}
        </button>
        <label className="inline small">
          prompts
          <input type="number" aria-label="Prompts to compare" min={2} max={8} value={numPrompts} onChange={(e) => setNumPrompts(Math.max(2, Math.min(8, e.target.valueAsNumber || 2)))} />
        </label>
      </div>
      <p className="muted small">
        Open sessions' last prompts (or {numPrompts} short ones) in fresh greedy sessions, serialized then batched.
        {onServer && ' On a server, serialized means this page sends one request at a time; rates count decode tokens over 250 ms samples, not server steps.'}
      </p>
      {running && <p className="small">{compare.phase}…</p>}
      {compare.status === 'error' && (
        <p className="pane-error" role="alert">
          {compare.error}
        </p>
      )}
      {(compare.serialized || compare.batched) && (
        <dl className="facts compact" data-testid="compare-result">
          <dt>Serialized</dt>
          <dd data-testid="compare-serialized" title={detail(compare.serialized, unit)}>
            {compare.serialized ? `${compare.serialized.tokensPerSec.toFixed(1)} tok/s` : '…'}
          </dd>
          <dt>Batched</dt>
          <dd data-testid="compare-batched" title={detail(compare.batched, unit)}>
            {compare.batched ? `${compare.batched.tokensPerSec.toFixed(1)} tok/s` : '…'}
          </dd>
          <dt>Speed-up</dt>
          <dd data-testid="compare-ratio" data-ratio={compare.ratio ?? ''} className="big">
            {compare.ratio ? `${compare.ratio.toFixed(2)}×` : compare.status === 'done' ? 'n/a' : '…'}
          </dd>
        </dl>
      )}
    </section>
  );
}
