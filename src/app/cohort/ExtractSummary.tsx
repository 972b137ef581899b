// The latest Extract x N run: replies that are JSON, that follow the schema, and fields as the
// documents state them. Reads the panes' marks; hidden until a run has started and once all its panes are closed.
import { useMemo } from 'react';
import { tallyExtract, type ExtractMark } from '../derive/extract-plan';
import { useRunsStore } from '../state/runs-store';
import { useSessionsStore } from '../state/sessions-store';

export function ExtractSummary() {
  const run = useRunsStore((s) => s.extract);
  const views = useSessionsStore((s) => s.views);
  const marks = useMemo(() => (run ? run.paneIds.map((id) => views.get(id)?.extract).filter((m): m is ExtractMark => !!m) : []), [run, views]);
  const anyOpen = run?.paneIds.some((id) => views.has(id)) ?? false;
  if (!run || !anyOpen) return null;
  const t = tallyExtract(marks);
  return (
    <section className="side-card" data-testid="extract-summary">
      <h3>
        Extract × {run.paneIds.length} <span className="muted small">({run.kind} records)</span>
      </h3>
      <p className="small">
        Follow the schema{' '}
        <strong data-testid="extract-valid" data-valid={t.numMatchSchema} data-judged={t.numJudged}>
          {t.numMatchSchema}/{t.numJudged}
        </strong>{' '}
        <span className="muted">
          ({t.numParsed} parse as JSON · {t.numJudged} of {t.numSessions} done · seed {run.seed})
        </span>
      </p>
      <p className="small">
        Fields as the documents state them <strong data-testid="extract-fields">{t.numFields > 0 ? `${t.numCorrect}/${t.numFields}` : '—'}</strong>
      </p>
    </section>
  );
}
