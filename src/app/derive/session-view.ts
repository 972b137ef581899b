// A chat pane's plain mirror of its engine session, and the pure transitions that fold user
// actions and StepEvents into it. No store, no engine calls: state/sessions-store.ts holds these.
import type { FinishReason, SessionState, TokenLogprob, WaitReason } from '../../protocol/events';
import type { ReceivedStep } from './step-ring';
import { sameSettings, type SessionSettings } from './session-settings';
import type { ExtractMark } from './extract-plan';
import { decodeRateSinceFirstToken, sendToFirstTokenMs, stepEndMs } from '../../protocol/metrics';

export interface ChatLine {
  role: 'user' | 'assistant';
  text: string;
  /** A reply's tokens with their log-probabilities, when its session asks for them; not saved across reloads. */
  tokens?: TokenLogprob[];
}

/** The needle this pane must find (NIAH preset); passed/leaks are set when its turn ends. */
export interface NiahMark {
  code: string;
  numLines: number;
  allCodes: string[];
  passed?: boolean;
  leaks?: string[];
}

export interface SessionView {
  paneId: string;
  label: string;
  /** Set once the engine session exists (created on the first send, with these settings). */
  engineId?: string;
  settings: SessionSettings;
  state: SessionState;
  /** While waiting after a send: why the engine has not taken it into a step yet. */
  waitReason?: WaitReason;
  lines: ChatLine[];
  lastPrompt?: string;
  /** Page clock (ms) when the current turn was sent. */
  sentAtMs?: number;
  /** Send to arrival of the first sampled token, page clock (metrics.ts's sendToFirstTokenMs). */
  ttftMs?: number;
  /** Engine clock: end of the step that sampled the first / latest token of the turn. */
  firstTokenEndMs?: number;
  lastTokenEndMs?: number;
  numOutputTokens: number;
  numDecodeTokens: number;
  /** Decode tokens over the time from first to latest token (metrics.ts's decodeRateSinceFirstToken). */
  tokensPerSec?: number;
  finishReason?: FinishReason;
  error?: string;
  /** After a reset during a turn: that turn's events are dropped until it ends. */
  discarding: boolean;
  /** Cancel was pressed: shown at once, while the engine ends the turn at its next step boundary. */
  cancelling?: boolean;
  niah?: NiahMark;
  /** The document this pane extracts fields from (Extract x N preset). */
  extract?: ExtractMark;
  /** Panes the app opened itself (compare runs). */
  tag?: string;
  /** The engine restarted: the next engine session is created with this pane's transcript. */
  restoreHistory?: boolean;
  /** A message the engine refused before any token (e.g. longer than the KV pool), handed back
   *  to the composer so it is not lost; the composer takes it and clears this. */
  returnedDraft?: string;
  /** A message sent while a model loads: shown as waiting for the model, sent when the load
   *  ends (derive/held-message.ts). Not yet a turn: lines and state are untouched. */
  waitingForModel?: HeldMessage;
  /** Another tab of the page runs a turn in this pane (its saves arrive live): not to be sent into here meanwhile. */
  busyElsewhere?: boolean;
}

export interface HeldMessage {
  text: string;
  /** Page clock (ms) when it was sent: held messages go to the engine oldest first. */
  heldAtMs: number;
}

const ACTIVE: ReadonlySet<SessionState> = new Set(['waiting', 'prefill', 'decode']);

export function isActive(view: SessionView): boolean {
  return ACTIVE.has(view.state) || view.discarding;
}

/** The pane takes no new message and no rewind: a turn runs (here or in another tab), or a message waits for the model. */
export function isBusy(view: SessionView): boolean {
  return isActive(view) || view.waitingForModel !== undefined || view.busyElsewhere === true;
}

export function newSessionView(paneId: string, label: string, settings: SessionSettings): SessionView {
  return { paneId, label, settings, state: 'idle', lines: [], numOutputTokens: 0, numDecodeTokens: 0, discarding: false };
}

/** A user message goes out: a new assistant line waits for tokens; per-turn stats restart. */
export function beginTurn(view: SessionView, text: string, nowMs: number): SessionView {
  return {
    ...view,
    state: 'waiting',
    lines: [...view.lines, { role: 'user', text }, { role: 'assistant', text: '' }],
    lastPrompt: text,
    sentAtMs: nowMs,
    ttftMs: undefined,
    firstTokenEndMs: undefined,
    lastTokenEndMs: undefined,
    numOutputTokens: 0,
    numDecodeTokens: 0,
    tokensPerSec: undefined,
    finishReason: undefined,
    error: undefined,
    cancelling: undefined,
    niah: view.niah ? { ...view.niah, passed: undefined, leaks: undefined } : undefined,
    extract: view.extract ? { kind: view.extract.kind, expected: view.extract.expected } : undefined,
  };
}

/**
 * Settings changed between turns. The engine session was created with the old ones, so it is
 * dropped: the next send creates one with these and the transcript as history (as a rewind
 * does). Refused while a turn runs; unchanged settings keep the engine session.
 */
export function changeSettings(view: SessionView, settings: SessionSettings): SessionView {
  if (isActive(view) || sameSettings(view.settings, settings)) return view;
  const { engineId: _dropped, ...rest } = view;
  return { ...rest, settings, restoreHistory: view.lines.length > 0 };
}

/** Cancel pressed on a running turn; the turn's finish (reason 'cancelled') clears it. */
export function markCancelling(view: SessionView): SessionView {
  return isActive(view) && !view.discarding && !view.cancelling ? { ...view, cancelling: true } : view;
}

export function failTurn(view: SessionView, message: string): SessionView {
  return { ...view, state: 'error', error: message };
}

/** History forgotten; a running turn keeps the pane busy until its cancellation arrives. */
export function resetView(view: SessionView): SessionView {
  const busy = isActive(view);
  return {
    ...newSessionView(view.paneId, view.label, view.settings),
    engineId: view.engineId,
    niah: view.niah,
    extract: view.extract,
    tag: view.tag,
    discarding: busy,
    state: busy ? 'cancelled' : 'idle',
  };
}

/**
 * The engine worker restarted: the engine session is gone but the transcript stays, to be
 * handed to the next engine session; a turn cut off by the restart ends with an error.
 */
export function suspendView(view: SessionView, cutMessage = 'The engine worker stopped during this turn; send it again.'): SessionView {
  const { engineId: _gone, ...rest } = view;
  const cut = isActive(view);
  return {
    ...rest,
    discarding: false,
    cancelling: undefined,
    restoreHistory: view.lines.length > 0,
    ...(cut ? { state: 'error' as const, error: cutMessage } : {}),
  };
}

/** The transcript before the turn just begun (its user line and empty reply), as chat history. */
export function historyBeforeTurn(view: SessionView): Array<{ role: 'user' | 'assistant'; content: string }> {
  return view.lines
    .slice(0, -2)
    .filter((line) => line.text !== '')
    .map((line) => ({ role: line.role, content: line.text }));
}

/**
 * A turn that ended in an error before its first token: its user line and empty reply leave
 * the transcript (the engine drops them from its history too) and the text goes back to the
 * composer, so a refused message is neither lost nor shown as an empty bubble.
 */
export function refuseTurn(view: SessionView, message: string): SessionView {
  const n = view.lines.length;
  const turnStarted = n >= 2 && view.lines[n - 1].role === 'assistant' && view.lines[n - 1].text === '' && view.lines[n - 2].role === 'user';
  if (!turnStarted) return { ...view, state: 'error', error: message, waitReason: undefined, cancelling: undefined };
  return { ...view, state: 'error', error: message, waitReason: undefined, cancelling: undefined, finishReason: 'error', lines: view.lines.slice(0, -2), returnedDraft: view.lines[n - 2].text };
}

/**
 * Back to just before the user line at lineIndex (regenerate, edit and resend): later lines go,
 * the engine session is dropped and the next one is created with the lines that remain.
 */
export function rewindView(view: SessionView, lineIndex: number): SessionView {
  const { engineId: _dropped, ...rest } = view;
  const lines = view.lines.slice(0, Math.max(0, Math.min(lineIndex, view.lines.length)));
  return {
    ...rest,
    lines,
    state: 'idle',
    waitReason: undefined,
    error: undefined,
    finishReason: undefined,
    ttftMs: undefined,
    tokensPerSec: undefined,
    numOutputTokens: 0,
    numDecodeTokens: 0,
    discarding: false,
    cancelling: undefined,
    restoreHistory: lines.length > 0,
  };
}

/** Index of the last user line, or -1. */
export function lastUserLine(view: SessionView): number {
  for (let i = view.lines.length - 1; i >= 0; i--) if (view.lines[i].role === 'user') return i;
  return -1;
}

function appendAssistant(lines: ChatLine[], text: string, logprobs?: readonly TokenLogprob[]): ChatLine[] {
  const numTokens = logprobs?.length ?? 0;
  if (!text && numTokens === 0) return lines;
  const last = lines[lines.length - 1];
  const previous = last?.role === 'assistant' ? last : undefined;
  const tokens = numTokens > 0 ? { tokens: [...(previous?.tokens ?? []), ...logprobs!] } : previous?.tokens ? { tokens: previous.tokens } : {};
  const line: ChatLine = { role: 'assistant', text: (previous?.text ?? '') + text, ...tokens };
  return previous ? [...lines.slice(0, -1), line] : [...lines, line];
}

function finishedState(reason: FinishReason): SessionState {
  return reason === 'cancelled' ? 'cancelled' : reason === 'error' ? 'error' : 'done';
}

/**
 * Folds StepEvents into the panes they concern. Returns the same Map when nothing changed, and
 * a new Map with new objects for changed panes otherwise (never mutates its inputs).
 */
export function applyReceivedSteps(views: ReadonlyMap<string, SessionView>, paneByEngineId: ReadonlyMap<string, string>, records: readonly ReceivedStep[]): ReadonlyMap<string, SessionView> {
  let next: Map<string, SessionView> | null = null;
  const current = (paneId: string) => (next ?? views).get(paneId);
  const put = (view: SessionView) => {
    next ??= new Map(views);
    next.set(view.paneId, view);
  };
  for (const { event, receivedAtMs } of records) {
    const endMs = stepEndMs(event);
    for (const row of event.rows) {
      const paneId = paneByEngineId.get(row.sessionId);
      const view = paneId === undefined ? undefined : current(paneId);
      if (!view || view.discarding || view.sentAtMs === undefined) continue;
      const n = row.newTokenIds.length;
      const updated: SessionView = { ...view, state: row.kind, waitReason: undefined, lines: appendAssistant(view.lines, row.newText, row.newLogprobs) };
      if (n > 0) {
        updated.numOutputTokens += n;
        // this event carries the turn's first token if none came before it (firstTokenStep)
        updated.ttftMs ??= sendToFirstTokenMs(view.sentAtMs, receivedAtMs);
        updated.firstTokenEndMs ??= endMs;
        updated.lastTokenEndMs = endMs;
        if (row.kind === 'decode') updated.numDecodeTokens += n;
        updated.tokensPerSec = decodeRateSinceFirstToken(updated.numDecodeTokens, updated.firstTokenEndMs, endMs) ?? updated.tokensPerSec;
      }
      put(updated);
    }
    for (const waiting of event.waiting) {
      const paneId = paneByEngineId.get(waiting.sessionId);
      const view = paneId === undefined ? undefined : current(paneId);
      if (!view || view.discarding || !isActive(view)) continue;
      if (view.state !== 'waiting' || view.waitReason !== waiting.reason) put({ ...view, state: 'waiting', waitReason: waiting.reason });
    }
    for (const finished of event.finished) {
      const paneId = paneByEngineId.get(finished.sessionId);
      const view = paneId === undefined ? undefined : current(paneId);
      if (!view) continue;
      if (view.discarding) {
        put({ ...view, discarding: false, state: 'idle' });
        continue;
      }
      if (finished.reason === 'error' && view.numOutputTokens === 0 && !finished.newText) {
        put(refuseTurn(view, finished.error ?? 'the engine refused this message'));
        continue;
      }
      put({
        ...view,
        waitReason: undefined,
        cancelling: undefined,
        lines: appendAssistant(view.lines, finished.newText),
        state: finishedState(finished.reason),
        finishReason: finished.reason,
        ...(finished.error !== undefined ? { error: finished.error } : {}),
      });
    }
  }
  return next ?? views;
}

/** What a waiting pane's badge says about why it waits. */
export const WAIT_REASON_TEXT: Record<WaitReason, string> = {
  queued: 'queued behind earlier sessions',
  'kv-full': 'KV cache full: waits for blocks to free up',
  preempted: 'preempted to free KV blocks: will recompute',
  grammar: 'its response format is being compiled',
};

/** The text of the pane's latest assistant line (what its current turn has produced). */
export function latestReply(view: SessionView): string {
  const last = view.lines[view.lines.length - 1];
  return last?.role === 'assistant' ? last.text : '';
}
