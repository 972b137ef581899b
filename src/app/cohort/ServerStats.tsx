// The latest server sample at a glance (busy slots, deferred requests, busy slots per decode, KV use):
// what a server backend reports per sampling interval, labelled as sampled, never as a step.
import type { ServerSample } from '../../protocol/server';

function Fact({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd data-testid={testId}>{value}</dd>
    </div>
  );
}

const orDash = (value: number | undefined, digits = 0) => (value === undefined ? '–' : value.toFixed(digits));

export function ServerStats({ latest, sample }: { latest: { stepIndex: number; elapsedMs: number; numTokens: number }; sample: ServerSample }) {
  return (
    <dl className="live-stats" data-testid="live-stats" data-source="server">
      <Fact label={`${sample.kind} · sample`} value={`${latest.stepIndex} (${latest.elapsedMs.toFixed(0)} ms)`} />
      <Fact label="busy slots" value={`${orDash(sample.numBusy)}${sample.numSlots !== undefined ? `/${sample.numSlots}` : ''}`} testId="server-busy" />
      <Fact label="deferred" value={orDash(sample.numDeferred)} testId="queue-depth" />
      <Fact label="tokens (this page)" value={String(latest.numTokens)} />
      {sample.numDecodeCalls !== undefined && <Fact label="decode calls" value={String(sample.numDecodeCalls)} />}
      {sample.meanBusyPerDecode !== undefined && <Fact label="busy per decode (mean)" value={orDash(sample.meanBusyPerDecode, 2)} />}
      {sample.kvCacheUsage !== undefined && <Fact label="KV used" value={`${(sample.kvCacheUsage * 100).toFixed(0)}%`} />}
      {sample.errors && <Fact label="unavailable" value={sample.errors.map((e) => e.split(':')[0]).join(', ')} />}
    </dl>
  );
}
