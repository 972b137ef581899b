// The hovered step's StepEvent, in full: timing, rows (session, kind, tokens, position, drafted and
// accepted, text), speculation's tokens per row-step, finished requests, KV blocks and queue. Plain text only.
import type { StepEvent } from '../../protocol/events';
import { rowDraftLabel, stepSpeculationLine } from '../derive/speculation-view';
import { useSessionsStore } from '../state/sessions-store';

const TOOLTIP_WIDTH = 340;

export function StepTooltip({ event, x, width }: { event: StepEvent; x: number; width: number }) {
  const paneByEngineId = useSessionsStore((s) => s.paneByEngineId);
  const views = useSessionsStore((s) => s.views);
  const label = (id: string) => views.get(paneByEngineId.get(id) ?? '')?.label ?? id;
  const left = Math.max(0, Math.min(width - TOOLTIP_WIDTH, x + 12));
  const speculation = stepSpeculationLine(event);
  return (
    <div className="tooltip" data-testid="timeline-tooltip" style={{ left, width: TOOLTIP_WIDTH }}>
      <div className="tooltip-title">
        Step {event.stepIndex} · {event.mode}
      </div>
      <div className="muted small">
        {event.elapsedMs.toFixed(1)} ms wall{event.gpuTimeMs !== undefined ? ` · ${event.gpuTimeMs.toFixed(1)} ms GPU` : ''} · {event.numTokens} tokens · {event.rows.length} rows
      </div>
      <table className="tooltip-rows">
        <tbody>
          {event.rows.map((row) => (
            <tr key={row.requestId}>
              <td>{label(row.sessionId)}</td>
              <td className={`kind-${row.kind}`}>{row.kind}</td>
              <td>{row.numTokens} tok</td>
              <td>@{row.position}</td>
              <td className="small" data-testid="tooltip-drafts">
                {rowDraftLabel(row)}
              </td>
              <td className="mono">{row.newText ? JSON.stringify(row.newText) : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {speculation && (
        <div className="small" data-testid="tooltip-speculation">
          {speculation}
        </div>
      )}
      {event.finished.length > 0 && (
        <div className="small">
          finished: {event.finished.map((f) => `${label(f.sessionId)} (${f.reason}${f.error ? `: ${f.error}` : ''})`).join(', ')}
        </div>
      )}
      <div className="muted small">
        KV {event.kvBlocksUsed} used / {event.kvBlocksFree} free / {event.kvBlocksShared} shared / {event.kvBlocksTotal} total · queue {event.queueDepth} · running {event.numRunning}
      </div>
    </div>
  );
}
