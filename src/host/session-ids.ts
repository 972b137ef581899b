// Session ids as the host hands them out: `s<n>`, numbered across every model loaded, so a session
// of a replaced model never shares an id with one of the next (each engine numbers its own from s1).
import type { StepEvent } from '../protocol/events';

const SESSION_ID = /^s(\d+)$/;

/** The number in a session id `s<n>`, or null for anything else. */
export function sessionNumber(id: string): number | null {
  const m = SESSION_ID.exec(id);
  return m ? Number(m[1]) : null;
}

/**
 * `s<n>` as `s<n + by>`; a request id `s<n>:<turn>` likewise. The engine names sessions `s<n>` from 1 in
 * creation order (src/engine/sessions.ts); createSession checks that, so a change there fails loudly.
 */
export function shiftId(id: string, by: number): string {
  if (by === 0) return id;
  const colon = id.indexOf(':');
  const session = colon < 0 ? id : id.slice(0, colon);
  const n = sessionNumber(session);
  if (n === null) return id;
  return `s${n + by}${colon < 0 ? '' : id.slice(colon)}`;
}

/** A step event of an engine whose sessions start after `by` earlier ones, in host ids (as it is when by is 0). */
export function shiftEvent(event: StepEvent, by: number): StepEvent {
  if (by === 0) return event;
  return {
    ...event,
    rows: event.rows.map((r) => ({ ...r, sessionId: shiftId(r.sessionId, by), requestId: shiftId(r.requestId, by) })),
    finished: event.finished.map((f) => ({ ...f, sessionId: shiftId(f.sessionId, by), requestId: shiftId(f.requestId, by) })),
    waiting: event.waiting.map((w) => ({ ...w, sessionId: shiftId(w.sessionId, by), requestId: shiftId(w.requestId, by) })),
  };
}
