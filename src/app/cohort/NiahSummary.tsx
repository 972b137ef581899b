// Recall of the latest NIAH x N run: passing sessions over sessions, with any leaked codes.
// Reads the panes' marks; hidden until a run has started and once all its panes are closed.
import { useMemo } from 'react';
import { recallOf } from '../derive/niah-plan';
import type { NiahMark } from '../derive/session-view';
import { useRunsStore } from '../state/runs-store';
import { useSessionsStore } from '../state/sessions-store';

export function NiahSummary() {
  const run = useRunsStore((s) => s.niah);
  const views = useSessionsStore((s) => s.views);
  const marks = useMemo(() => (run ? run.paneIds.map((id) => views.get(id)?.niah).filter((m): m is NiahMark => !!m) : []), [run, views]);
  // Every pane of the run closed ("close all"): nothing left to report on.
  const anyOpen = run?.paneIds.some((id) => views.has(id)) ?? false;
  if (!run || !anyOpen) return null;
  const recall = recallOf(marks);
  const leaks = marks.flatMap((m) => m.leaks ?? []);
  return (
    <section className="side-card" data-testid="niah-summary">
      <h3>NIAH × {run.paneIds.length}</h3>
      <p className="small">
        Recall{' '}
        <strong data-testid="niah-recall" data-recall={recall.recall ?? ''}>
          {recall.recall !== null ? recall.recall.toFixed(2) : `${recall.numPassed}/${recall.numJudged} so far`}
        </strong>{' '}
        <span className="muted">
          ({recall.numPassed} of {recall.numSessions} passed · haystacks ≤{run.maxTokens} tokens · seed {run.seed})
        </span>
      </p>
      {leaks.length > 0 && (
        <p className="pane-error" role="alert">
          Leaked codes: {leaks.join(', ')}
        </p>
      )}
    </section>
  );
}
