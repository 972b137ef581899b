// The grid of chat panes, in the order they were opened. Subscribes to the pane order only;
// each pane subscribes to its own view.
import { useSessionsStore } from '../state/sessions-store';
import { ExamplePrompts } from './ExamplePrompts';
import { SessionPane } from './SessionPane';
import './sessions.css';

export function SessionGrid() {
  const order = useSessionsStore((s) => s.order);
  if (order.length === 0) {
    return (
      <section className="session-grid empty" data-testid="session-grid">
        <ExamplePrompts />
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
