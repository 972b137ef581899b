// The page's one subscription to StepEvents: a ring of the last 2,000 outside React, flushed to
// the stores once per animation frame. Taps let a running comparison see every step it needs.
import type { StepEvent } from '../../protocol/events';
import type { EngineClient } from '../engine-client';
import { StepRing, type ReceivedStep } from '../derive/step-ring';
import { useSessionsStore } from './sessions-store';
import { useTelemetryStore } from './telemetry-store';

export const STEP_RING_CAPACITY = 2000;
/** Flush even when frames stop (a hidden tab) so panes keep up. */
const BACKSTOP_MS = 250;

export const stepRing = new StepRing<ReceivedStep>(STEP_RING_CAPACITY);

let pending: ReceivedStep[] = [];
let frame: number | null = null;
let backstop: ReturnType<typeof setTimeout> | null = null;
const taps = new Set<(event: StepEvent) => void>();
/** Set before the subscribe call resolves, so a second start cannot subscribe twice. */
let subscribed = false;

/** Engine-clock origin (ms) of the charts' time axis: the first step since the last clear. */
export let stepOriginMs: number | null = null;

function flush(): void {
  if (frame !== null) cancelAnimationFrame(frame);
  if (backstop !== null) clearTimeout(backstop);
  frame = null;
  backstop = null;
  if (pending.length === 0) return;
  const batch = pending;
  pending = [];
  useSessionsStore.getState().applyRecords(batch);
  useTelemetryStore.getState().noteSteps(batch[batch.length - 1].event);
}

function receive(event: StepEvent): void {
  const record = { event, receivedAtMs: performance.now() };
  stepOriginMs ??= event.startedAtMs;
  stepRing.push(record);
  pending.push(record);
  for (const tap of taps) tap(event);
  if (frame === null) frame = requestAnimationFrame(flush);
  if (backstop === null) backstop = setTimeout(flush, BACKSTOP_MS);
}

/** Subscribes once for the page's lifetime; later calls do nothing. */
export async function startStepFeed(client: EngineClient): Promise<void> {
  if (subscribed) return;
  subscribed = true;
  await client.subscribe(receive);
}

/** Forgets the subscription (its worker is gone), so startStepFeed subscribes a new one. */
export function stopStepFeed(): void {
  subscribed = false;
}

/** Calls onStep for every step until the returned function is called. */
export function tapSteps(onStep: (event: StepEvent) => void): () => void {
  taps.add(onStep);
  return () => taps.delete(onStep);
}

/** A new model: session ids start over, so old steps would be misattributed. */
export function clearSteps(): void {
  flush();
  stepRing.clear();
  stepOriginMs = null;
  useTelemetryStore.getState().clear();
}
