// Above the grid: add one session or N at once (with the settings for new sessions), the
// NIAH x N and Extract x N presets, and closing everything. Buttons only; the work is in state/*-actions.ts.
import { useState } from 'react';
import { isBusy } from '../derive/session-view';
import { StorageNotice } from './StorageNotice';
import { closeAllSessions, addSessions, stopAll } from '../state/session-actions';
import { useEscape } from '../use-escape';
import { runNiah } from '../state/niah-actions';
import { runExtract } from '../state/extract-actions';
import { EXTRACT_KINDS, type ExtractKind } from '../../protocol/extract';
import { useModelStore } from '../state/model-store';
import { useSessionsStore } from '../state/sessions-store';
import { SessionSettingsForm } from './SessionSettingsForm';

const NIAH_LENGTHS = [600, 1200, 2000];

/** Opens panes and hands the keyboard to the first one's composer. */
function addAndFocus(count: number): void {
  const [first] = addSessions(count);
  useSessionsStore.getState().requestFocus(first);
}

function NewSessionSettings({ onClose }: { onClose: () => void }) {
  const settings = useSessionsStore((s) => s.newSettings);
  const setSettings = useSessionsStore((s) => s.setNewSettings);
  useEscape(true, onClose);
  return (
    <div className="popover" role="dialog" aria-label="Settings for new sessions" data-testid="new-session-settings">
      <div className="card-head">
        <strong>Settings for new sessions</strong>
        <button type="button" className="link" onClick={onClose}>
          done
        </button>
      </div>
      <SessionSettingsForm settings={settings} onChange={setSettings} />
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="create-with-settings"
          onClick={() => {
            addAndFocus(1);
            onClose();
          }}
        >
          New session with these settings
        </button>
      </div>
      <StorageNotice />
    </div>
  );
}

export function SessionsToolbar() {
  const [count, setCount] = useState(4);
  const [niahCount, setNiahCount] = useState(8);
  const [niahTokens, setNiahTokens] = useState(1200);
  const [extractCount, setExtractCount] = useState(8);
  const [extractKind, setExtractKind] = useState<ExtractKind>('person');
  const [showSettings, setShowSettings] = useState(false);
  const hasModel = useModelStore((s) => s.model !== null);
  const numPanes = useSessionsStore((s) => s.order.length);
  const numBusy = useSessionsStore((s) => {
    let n = 0;
    // a pane another tab answers in is not this tab's to stop
    for (const view of s.views.values()) if (isBusy(view) && !view.busyElsewhere) n++;
    return n;
  });
  return (
    <div className="toolbar">
      <div className="group">
        <button type="button" className="primary" data-testid="add-session" onClick={() => addAndFocus(1)}>
          + Session
        </button>
        <span className="joined">
          <button type="button" data-testid="add-n-sessions" onClick={() => addAndFocus(count)}>
            + {count} sessions
          </button>
          <input type="number" aria-label="Sessions to add" data-testid="add-n-count" min={1} max={64} value={count} onChange={(e) => setCount(Math.max(1, Math.min(64, e.target.valueAsNumber || 1)))} />
        </span>
        <span className="anchor">
          <button type="button" aria-expanded={showSettings} data-testid="new-session-settings-toggle" onClick={() => setShowSettings(!showSettings)}>
            New session with settings…
          </button>
          {showSettings && <NewSessionSettings onClose={() => setShowSettings(false)} />}
        </span>
      </div>
      <div className="group">
        <span className="joined">
          <button type="button" data-testid="niah-preset" disabled={!hasModel} title="Needle-in-a-haystack: one greedy session per needle, staggered starts; speculation as in the settings for new sessions" onClick={() => void runNiah(niahCount, niahTokens)}>
            NIAH × {niahCount}
          </button>
          <input type="number" aria-label="NIAH sessions" data-testid="niah-count" min={1} max={32} value={niahCount} onChange={(e) => setNiahCount(Math.max(1, Math.min(32, e.target.valueAsNumber || 1)))} />
          <select aria-label="Longest haystack (tokens)" data-testid="niah-length" value={niahTokens} onChange={(e) => setNiahTokens(Number(e.target.value))}>
            {NIAH_LENGTHS.map((n) => (
              <option key={n} value={n}>
                ≤{n} tok
              </option>
            ))}
          </select>
        </span>
        <span className="joined">
          <button type="button" data-testid="extract-preset" disabled={!hasModel} title="Extract: one greedy session per generated document, each answering in the same JSON schema, all sent at once" onClick={() => void runExtract(extractCount, extractKind)}>
            Extract × {extractCount}
          </button>
          <input type="number" aria-label="Extract sessions" data-testid="extract-count" min={1} max={32} value={extractCount} onChange={(e) => setExtractCount(Math.max(1, Math.min(32, e.target.valueAsNumber || 1)))} />
          <select aria-label="Records to extract" data-testid="extract-kind" value={extractKind} onChange={(e) => setExtractKind(e.target.value as ExtractKind)}>
            {EXTRACT_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
        </span>
        <button type="button" className="danger" disabled={numBusy === 0} data-testid="stop-all" title="Cancel every turn in progress and drop messages waiting for the model" onClick={() => void stopAll()}>
          stop all
        </button>
        <button type="button" className="link danger" disabled={numPanes === 0} data-testid="close-all" onClick={() => void closeAllSessions()}>
          close all
        </button>
      </div>
      <StorageNotice />
    </div>
  );
}
