// One chat pane: label, state, time to first token and decode tok/s, NIAH mark, settings (editable
// between turns, applied to the next one), the streamed transcript and the composer (Enter sends, Shift+Enter newline).
// A message held while a model loads shows the pane as waiting; Cancel drops it.
import { useEffect, useRef, useState } from 'react';
import { isActive, isBusy, WAIT_REASON_TEXT, type SessionView } from '../derive/session-view';
import { cancelTurn, closeSession, editMessage, regenerate, resetSession, sendMessage, takeReturnedDraft, updateSettings } from '../state/session-actions';
import { useSessionsStore } from '../state/sessions-store';
import { composerDrafts } from '../state/composer-drafts';
import { speculationSummary } from '../derive/speculation-view';
import { formatSummary } from '../derive/session-settings';
import { EmptyPaneHint } from './EmptyPaneHint';
import { SessionSettingsForm } from './SessionSettingsForm';
import { Transcript } from './Transcript';

function settingsSummary(s: SessionView['settings']): string {
  const sampling = s.temperature === 0 ? 'greedy' : `T ${s.temperature} · top-p ${s.topP} · top-k ${s.topK || 'off'}`;
  return `${sampling} · max ${s.maxNewTokens} · seed ${s.seed ?? 'auto'}${s.systemPrompt.trim() ? ' · system prompt' : ''}${speculationSummary(s.speculation)}${formatSummary(s)}`;
}

/** The state a person sees: a pane holding a message for the model waits, though no turn runs yet. */
function shownState(view: SessionView): SessionView['state'] {
  return view.waitingForModel ? 'waiting' : view.state;
}

function StateBadge({ view }: { view: SessionView }) {
  if (view.busyElsewhere && !isActive(view)) {
    return (
      <span className="badge state-decode" data-testid="session-state" data-elsewhere="true" title="Another tab of this page is answering in this pane; its reply shows here as it is saved">
        answering in another tab
      </span>
    );
  }
  if (view.waitingForModel) {
    return (
      <span className="badge state-waiting" data-testid="session-state" data-wait-reason="model-loading" title="The model is loading: the message is sent when it is ready">
        waiting · model loading
      </span>
    );
  }
  return (
    <span
      className={`badge state-${view.state}`}
      data-testid="session-state"
      data-wait-reason={view.state === 'waiting' ? (view.waitReason ?? '') : ''}
      title={view.state === 'waiting' && view.waitReason ? WAIT_REASON_TEXT[view.waitReason] : undefined}
    >
      {view.discarding ? 'resetting' : view.cancelling ? 'cancelling…' : view.state === 'waiting' && view.waitReason && view.waitReason !== 'queued' ? `waiting · ${view.waitReason === 'kv-full' ? 'KV full' : view.waitReason === 'grammar' ? 'compiling grammar' : 'preempted'}` : view.state}
    </span>
  );
}

function Stats({ view }: { view: SessionView }) {
  return (
    <div className="pane-stats">
      <StateBadge view={view} />
      <span title="Time to first token" data-testid="session-ttft">
        TTFT {view.ttftMs !== undefined ? `${Math.round(view.ttftMs)} ms` : '—'}
      </span>
      <span title="Decode tokens per second in this turn" data-testid="session-tps">
        {view.tokensPerSec !== undefined ? `${view.tokensPerSec.toFixed(1)} tok/s` : '— tok/s'}
      </span>
      <span title="Tokens generated in this turn" className="muted">
        {view.numOutputTokens} tok
      </span>
    </div>
  );
}

function NiahBadge({ view }: { view: SessionView }) {
  const mark = view.niah;
  if (!mark) return null;
  const title = `needle ${mark.code} in ${mark.numLines} haystack lines` + (mark.leaks?.length ? `; leaked ${mark.leaks.join(', ')}` : '');
  if (mark.passed === undefined) {
    return (
      <span className="niah-mark pending" title={title}>
        {mark.code}
      </span>
    );
  }
  return (
    <span className={`niah-mark ${mark.passed ? 'pass' : 'fail'}`} data-testid="niah-result" data-pass={String(mark.passed)} data-code={mark.code} title={title}>
      {mark.passed ? '✓' : '✗'} {mark.code}
    </span>
  );
}

function ExtractBadge({ view }: { view: SessionView }) {
  const mark = view.extract;
  if (!mark) return null;
  const first = String(Object.values(mark.expected)[0] ?? '');
  const verdict = mark.verdict;
  if (!verdict) {
    return (
      <span className="niah-mark pending" title={`extracting the ${mark.kind} record of ${first}`}>
        {first}
      </span>
    );
  }
  const ok = verdict.matchesSchema && verdict.numCorrect === verdict.numFields;
  const title = `${verdict.parsed ? (verdict.matchesSchema ? 'JSON that follows the schema' : 'JSON that does not follow the schema') : 'not JSON'}; ${verdict.numCorrect} of ${verdict.numFields} fields as the document states them`;
  return (
    <span className={`niah-mark ${ok ? 'pass' : 'fail'}`} data-testid="extract-result" data-valid={String(verdict.matchesSchema)} data-correct={verdict.numCorrect} title={title}>
      {verdict.matchesSchema ? '{✓}' : '{✗}'} {verdict.numCorrect}/{verdict.numFields}
    </span>
  );
}

function Composer({ view }: { view: SessionView }) {
  // unsent text outlives a reload: it is read back as the composer mounts
  const [text, setShownText] = useState(() => composerDrafts.read(view.paneId));
  const setText = (next: string) => {
    setShownText(next);
    composerDrafts.write(view.paneId, next);
  };
  const input = useRef<HTMLTextAreaElement>(null);
  const busy = isBusy(view);
  const held = view.waitingForModel !== undefined;
  const wantsFocus = useSessionsStore((s) => s.focusPaneId === view.paneId);
  const draft = view.returnedDraft;
  useEffect(() => {
    if (draft === undefined) return;
    // A refused or edited message comes back here rather than being lost.
    setShownText(draft);
    composerDrafts.write(view.paneId, draft);
    takeReturnedDraft(view.paneId);
    input.current?.focus();
  }, [draft, view.paneId]);
  useEffect(() => {
    if (!wantsFocus) return;
    input.current?.focus();
    input.current?.scrollIntoView({ block: 'nearest' });
    useSessionsStore.getState().requestFocus(null);
  }, [wantsFocus]);
  const send = () => {
    if (busy || !text.trim()) return;
    const message = text;
    setText('');
    void sendMessage(view.paneId, message);
  };
  return (
    <div className="composer">
      <textarea
        ref={input}
        rows={2}
        aria-label={`Message to ${view.label}`}
        data-testid="session-input"
        placeholder={held ? 'Waiting for the model to load…' : busy ? 'Generating…' : 'Message (Enter sends, Shift+Enter for a new line)'}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      {busy && !view.discarding ? (
        <button type="button" className="danger" data-testid="session-cancel" disabled={view.cancelling} title={held ? 'Drop the message waiting for the model' : undefined} onClick={() => void cancelTurn(view.paneId)}>
          {view.cancelling ? 'Cancelling…' : 'Cancel'}
        </button>
      ) : (
        <button type="button" className="primary" data-testid="session-send" disabled={busy || !text.trim()} onClick={send}>
          Send
        </button>
      )}
    </div>
  );
}

export function SessionPane({ paneId }: { paneId: string }) {
  const view = useSessionsStore((s) => s.views.get(paneId));
  const [showSettings, setShowSettings] = useState(false);
  if (!view) return null;
  // Settings may change while a message waits for the model: they apply to it. Not while another
  // tab answers here: its saves would undo them.
  const busy = isActive(view) || view.busyElsewhere === true;
  const started = !!view.engineId || view.lines.length > 0;
  const editable = !busy;
  const state = shownState(view);
  return (
    <article className={`pane state-${state}`} data-testid="session-pane" data-session-id={paneId} data-engine-session-id={view.engineId ?? ''} data-state={state} data-waiting-for-model={view.waitingForModel ? 'true' : undefined} data-cancelling={view.cancelling ? 'true' : undefined} data-elsewhere={view.busyElsewhere ? 'true' : undefined} data-num-tokens={view.numOutputTokens}>
      <header className="pane-head">
        <span className="pane-label">{view.label}</span>
        {view.engineId && <span className="muted small">{view.engineId}</span>}
        <NiahBadge view={view} />
        <ExtractBadge view={view} />
        <span className="spacer" />
        <button type="button" className="link" aria-expanded={showSettings} data-testid="session-settings-toggle" title="Sampling settings" aria-label={`Settings of ${view.label}`} onClick={() => setShowSettings(!showSettings)}>
          ⚙
        </button>
        <button type="button" className="link" data-testid="session-reset" disabled={view.busyElsewhere} title="Reset: forget the history" aria-label={`Reset ${view.label}`} onClick={() => void resetSession(paneId)}>
          ↺
        </button>
        <button type="button" className="link danger" data-testid="session-close" title="Close" aria-label={`Close ${view.label}`} onClick={() => void closeSession(paneId)}>
          ✕
        </button>
      </header>
      <Stats view={view} />
      {showSettings ? (
        <>
          <SessionSettingsForm settings={view.settings} disabled={busy} onChange={(settings) => updateSettings(paneId, settings)} />
          {busy ? (
            <p className="muted small">Settings can change once this turn ends.</p>
          ) : (
            started && <p className="muted small">Changes apply from the next message; the transcript carries over.</p>
          )}
        </>
      ) : (
        <p className="pane-settings muted small" data-testid="session-settings-summary">
          {settingsSummary(view.settings)}
        </p>
      )}
      {view.error && (
        <p className="pane-error" role="alert" data-testid="session-error">
          {view.error}
        </p>
      )}
      <Transcript
        lines={view.lines}
        streaming={view.state === 'prefill' || view.state === 'decode'}
        actions={{ busy: isBusy(view), onEdit: (i) => void editMessage(paneId, i), onRegenerate: () => void regenerate(paneId) }}
        empty={<EmptyPaneHint paneId={paneId} editable={editable} />}
        held={view.waitingForModel?.text}
      />
      <Composer view={view} />
    </article>
  );
}
