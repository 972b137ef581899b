// The Compare card: the same prompts run two ways, batched vs serialized (same engine) or batched
// with speculation off vs on, each side's decode tok/s (decode-only steps, as the benchmark counts)
// and the ratio. The runs themselves are state/compare-actions.ts; the results CompareResults.tsx.
import { useState } from 'react';
import { runCompare, runSpeculationCompare } from '../state/compare-actions';
import { useModelStore } from '../state/model-store';
import { useRunsStore, type CompareKind } from '../state/runs-store';
import { ModeCompareResult, SpeculationCompareResult } from './CompareResults';

const TITLES: Record<CompareKind, string> = { modes: 'Batched vs serialized', speculation: 'Speculation off vs on' };

export function ComparePanel() {
  const compare = useRunsStore((s) => s.compare);
  const hasModel = useModelStore((s) => s.model !== null);
  const onServer = useModelStore((s) => s.model?.server !== undefined);
  // a server shows no steps: its rates are over the page's samples of its streams
  const unit = onServer ? 'samples' : 'steps';
  const [numPrompts, setNumPrompts] = useState(4);
  const [kind, setKind] = useState<CompareKind>('modes');
  const running = compare.status === 'running';
  const shown = running || compare.status !== 'idle' ? compare.kind : kind;
  return (
    <section className="side-card" data-testid="compare" data-status={compare.status} data-kind={compare.kind}>
      <div className="card-head">
        <h3>{TITLES[shown]}</h3>
      </div>
      <div className="row">
        <button type="button" data-testid="compare-modes" disabled={!hasModel || running} onClick={() => void (kind === 'modes' ? runCompare(numPrompts) : runSpeculationCompare(numPrompts))}>
          {running ? 'Comparing…' : 'Compare'}
        </button>
        <select aria-label="What to compare" data-testid="compare-kind" value={kind} disabled={running} onChange={(e) => setKind(e.target.value as CompareKind)}>
          <option value="modes">batched vs serialized</option>
          <option value="speculation" disabled={onServer}>
            speculation off vs on
          </option>
        </select>
        <label className="inline small">
          prompts
          <input type="number" aria-label="Prompts to compare" min={2} max={8} value={numPrompts} onChange={(e) => setNumPrompts(Math.max(2, Math.min(8, e.target.valueAsNumber || 2)))} />
        </label>
      </div>
      <p className="muted small">
        Open sessions' last prompts (or {numPrompts} short ones) in fresh greedy sessions,{' '}
        {kind === 'modes' ? 'serialized then batched.' : "batched with speculation off, then on (the new-session settings' max drafts, else auto): the replies are the same, only the speed differs."}
        {onServer && ' On a server, serialized means this page sends one request at a time; rates count decode tokens over 250 ms samples, not server steps.'}
      </p>
      {running && <p className="small">{compare.phase}…</p>}
      {compare.status === 'error' && (
        <p className="pane-error" role="alert">
          {compare.error}
        </p>
      )}
      {compare.kind === 'modes' && (compare.serialized || compare.batched) && <ModeCompareResult compare={compare} unit={unit} />}
      {compare.kind === 'speculation' && (compare.speculationOff || compare.speculationOn) && <SpeculationCompareResult compare={compare} unit={unit} />}
    </section>
  );
}
