// The latest step's counters at a glance: step index, rows and tokens, KV blocks, queue and
// running requests, and the mode the engine reported.
import { useTelemetryStore } from '../state/telemetry-store';
import { ServerStats } from './ServerStats';

export function LiveStats() {
  const latest = useTelemetryStore((s) => s.latest);
  if (!latest) return <p className="muted small live-stats">No steps yet: send a message to start the engine loop.</p>;
  if (latest.server) return <ServerStats latest={latest} sample={latest.server} />;
  return (
    <dl className="live-stats" data-testid="live-stats">
      <div>
        <dt>step</dt>
        <dd>{latest.stepIndex}</dd>
      </div>
      <div>
        <dt>tokens</dt>
        <dd>{latest.numTokens}</dd>
      </div>
      <div>
        <dt>step ms</dt>
        <dd>{latest.elapsedMs.toFixed(1)}</dd>
      </div>
      <div>
        <dt>running</dt>
        <dd>{latest.numRunning}</dd>
      </div>
      <div>
        <dt>queued</dt>
        <dd data-testid="queue-depth">{latest.queueDepth}</dd>
      </div>
      <div>
        <dt>KV used</dt>
        <dd>
          {latest.kvBlocksUsed}/{latest.kvBlocksTotal}
        </dd>
      </div>
      <div>
        <dt>shared</dt>
        <dd>{latest.kvBlocksShared}</dd>
      </div>
    </dl>
  );
}
