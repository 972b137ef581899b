// The header's live figures: all sessions' decode tok/s over the last seconds of steps, and the
// Compare card's last batched/serialized speed-up. Both come from src/protocol/metrics.ts.
import { useMemo } from 'react';
import { liveDecodeRate } from '../derive/live-rate';
import { isActive } from '../derive/session-view';
import { useRunsStore } from '../state/runs-store';
import { useSessionsStore } from '../state/sessions-store';
import { stepRing } from '../state/step-feed';
import { useTelemetryStore } from '../state/telemetry-store';
import { useThrottled } from './use-throttled';

/** Long enough to span a few steps on a software GPU, short enough to follow joins and leaves. */
const WINDOW_MS = 3000;

function AggregateRate() {
  const version = useThrottled(useTelemetryStore((s) => s.version), 250);
  const running = useSessionsStore((s) => {
    for (const view of s.views.values()) if (isActive(view)) return true;
    return false;
  });
  const rate = useMemo(() => (version >= 0 ? liveDecodeRate(stepRing.toArray().map((r) => r.event), WINDOW_MS) : null), [version]);
  if (!rate) return running ? <span className="live-figure muted">— tok/s</span> : null;
  return (
    <span
      className={`live-figure${running ? '' : ' muted'}`}
      data-testid="header-tps"
      data-tps={rate.tokensPerSec.toFixed(2)}
      title={`All sessions together: ${rate.decodeTokens} decode tokens in ${rate.forwardPasses} decode-only steps of the last ${WINDOW_MS / 1000} s of activity (${rate.meanRowsPerStep.toFixed(1)} rows per step)`}
    >
      <strong>{rate.tokensPerSec.toFixed(1)}</strong> tok/s{running ? '' : ' (last)'}
    </span>
  );
}

function CompareRatio() {
  const ratio = useRunsStore((s) => s.compare.ratio);
  if (!ratio) return null;
  return (
    <span className="live-figure" data-testid="header-speedup" data-ratio={ratio} title="Batched over serialized decode tok/s, from the Compare card's last run">
      batched <strong>{ratio.toFixed(2)}×</strong> serialized
    </span>
  );
}

export function LiveThroughput() {
  return (
    <div className="live-figures" aria-live="off">
      <AggregateRate />
      <CompareRatio />
    </div>
  );
}
