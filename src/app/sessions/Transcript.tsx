// One pane's conversation as text nodes only (model output is never HTML; logprob shading and tool
// call cards: ReplyParts.tsx), kept scrolled to the newest tokens; long messages fold; a held message shows last.
import { useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { ChatLine } from '../derive/session-view';
import { parseToolCalls } from '../derive/tool-calls';
import { ShadedTokens, ToolCallCards } from './ReplyParts';

/** Past this many lines or characters a message shows its first lines and a "show more". */
const FOLD_LINES = 8;
const FOLD_CHARS = 700;

/** What the message buttons do; absent where the transcript is only shown (tests, previews). */
export interface TranscriptActions {
  /** No edits while a turn runs: the engine session is busy. */
  busy: boolean;
  onEdit(lineIndex: number): void;
  onRegenerate(): void;
}

function isLong(text: string): boolean {
  return text.length > FOLD_CHARS || text.split('\n').length > FOLD_LINES;
}

/** Message buttons carry their word in CSS (data-icon) so a transcript's text is only the chat. */
function IconButton({ icon, label, testId, onClick, disabled }: { icon: string; label: string; testId: string; onClick: () => void; disabled?: boolean }) {
  return <button type="button" className="msg-action" data-icon={icon} aria-label={label} title={label} data-testid={testId} disabled={disabled} onClick={onClick} />;
}

function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <IconButton
      icon={copied ? 'copied' : 'copy'}
      label={copied ? 'Copied' : 'Copy reply'}
      testId="msg-copy"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => {
          setCopied(true);
          setTimeout(() => setCopied(false), 1200);
        });
      }}
    />
  );
}

function Message({ line, className, testId, streaming = false, children }: { line: ChatLine; className: string; testId?: string; streaming?: boolean; children?: ReactNode }) {
  const [open, setOpen] = useState(false);
  const [shaded, setShaded] = useState(true);
  const long = isLong(line.text);
  const folded = long && !open;
  // A finished reply that is a tool call shows as one; while it streams it is still text.
  const toolCalls = useMemo(() => (line.role === 'assistant' && !streaming ? parseToolCalls(line.text) : null), [line.role, line.text, streaming]);
  const tokens = line.tokens && line.tokens.length > 0 ? line.tokens : null;
  return (
    <div className={`msg ${className}`} data-testid={testId} data-folded={folded ? 'true' : undefined}>
      {toolCalls ? <ToolCallCards parsed={toolCalls} /> : tokens && shaded ? <ShadedTokens text={line.text} tokens={tokens} folded={folded} /> : <div className={folded ? 'msg-text folded' : 'msg-text'}>{line.text}</div>}
      {(long || children || tokens) && (
        <div className="msg-foot">
          {long && (
            <button type="button" className="link small" data-testid="msg-fold" aria-expanded={open} onClick={() => setOpen(!open)}>
              {open ? 'show less' : `show more (${line.text.split('\n').length} lines, ${line.text.length.toLocaleString('en-US')} chars)`}
            </button>
          )}
          {tokens && !toolCalls && (
            <button type="button" className="link small" data-testid="msg-shading-toggle" aria-pressed={shaded} title="Shade each token by its probability (logprobs)" onClick={() => setShaded(!shaded)}>
              {shaded ? 'plain text' : 'shade by probability'}
            </button>
          )}
          <span className="spacer" />
          {children}
        </div>
      )}
    </div>
  );
}

/** What a held message's mark says, also to screen readers (a status: announced when it appears). */
export const HELD_NOTE = 'waiting for the model to load';

export function Transcript({ lines, streaming, actions, empty, held }: { lines: readonly ChatLine[]; streaming: boolean; actions?: TranscriptActions; empty?: ReactNode; held?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [lines, held]);
  const last = lines.length - 1;
  const lastAssistant = last >= 0 && lines[last].role === 'assistant' ? last : -1;
  return (
    <div
      ref={box}
      className="transcript"
      data-testid="session-transcript"
      tabIndex={0}
      aria-label="Transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
      }}
    >
      {lines.length === 0 && held === undefined && empty}
      {lines.map((line, i) =>
        line.role === 'user' ? (
          <Message key={i} line={line} className="user">
            {actions && <IconButton icon="edit" label="Edit and resend" testId="msg-edit" disabled={actions.busy} onClick={() => actions.onEdit(i)} />}
          </Message>
        ) : (
          <Message key={i} line={line} className={`assistant${streaming && i === lastAssistant ? ' streaming' : ''}`} streaming={streaming && i === lastAssistant} testId={i === lastAssistant ? 'session-output' : undefined}>
            {actions && line.text !== '' && !(streaming && i === lastAssistant) && <CopyButton text={line.text} />}
            {actions && i === lastAssistant && !actions.busy && <IconButton icon="regenerate" label="Regenerate" testId="msg-regenerate" onClick={actions.onRegenerate} />}
          </Message>
        ),
      )}
      {held !== undefined && (
        <Message line={{ role: 'user', text: held }} className="user held" testId="msg-held">
          <span className="msg-held-note" role="status" data-testid="msg-held-note">
            {HELD_NOTE}
          </span>
        </Message>
      )}
    </div>
  );
}
