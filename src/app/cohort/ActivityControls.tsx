// The activity panel's window controls: how many recent steps the timeline and charts show,
// and "clear" to start them afresh. What they show is derived in derive/activity-window.ts.
import { ACTIVITY_WINDOW_OPTIONS } from '../derive/activity-window';
import { useActivityStore } from '../state/activity-store';

export function ActivityControls() {
  const windowSteps = useActivityStore((s) => s.windowSteps);
  const { setWindowSteps, clear } = useActivityStore.getState();
  return (
    <span className="activity-controls">
      <label className="inline small">
        <span className="wide-only">Show last</span>
        <select data-testid="activity-window" aria-label="Steps the timeline and charts show" value={windowSteps} onChange={(e) => setWindowSteps(Number(e.target.value))}>
          {ACTIVITY_WINDOW_OPTIONS.map((n) => (
            <option key={n} value={n}>
              {n.toLocaleString('en')} steps
            </option>
          ))}
        </select>
      </label>
      <button type="button" className="link" data-testid="activity-clear" title="Clear the timeline and charts; new steps show as they come" onClick={clear}>
        clear
      </button>
    </span>
  );
}
