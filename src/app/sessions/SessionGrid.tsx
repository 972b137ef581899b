// The grid of chat panes, in the order they were opened. Subscribes to the pane order only;
// each pane subscribes to its own view.
import { useSessionsStore } from '../state/sessions-store';
import { SessionPane } from './SessionPane';
import './sessions.css';

export function SessionGrid() {
  const order = useSessionsStore((s) => s.order);
  if (order.length === 0) {
    return (
      <section className="session-grid empty" data-testid="session-grid">
        <p className="muted">
          No sessions yet. Add one or several above, or start the NIAH preset: every session you send to rides in the same batched forward pass.
        </p>
      </section>
    );
  }
  return (
    <section className="session-grid" data-testid="session-grid">
      {order.map((paneId) => (
        <SessionPane key={paneId} paneId={paneId} />
      ))}
    </section>
  );
}
