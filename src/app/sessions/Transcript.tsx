// One pane's conversation as plain text (React text nodes only: model output is never HTML),
// kept scrolled to the newest tokens unless the reader scrolled up.
import { useLayoutEffect, useRef } from 'react';
import { summarizePrompt } from '../derive/niah-plan';
import type { ChatLine } from '../derive/session-view';

const MAX_PLAIN_LINES = 6;

/** Long prompts (NIAH haystacks) show head and tail; the full text opens on demand. */
function UserMessage({ text }: { text: string }) {
  const numLines = text.split('\n').length;
  if (numLines <= MAX_PLAIN_LINES) return <div className="msg user">{text}</div>;
  return (
    <details className="msg user long">
      <summary title={`${numLines} lines, ${text.length.toLocaleString('en-US')} characters: click to show all`}>{summarizePrompt(text, 4)}</summary>
      <div className="full-prompt">{text}</div>
    </details>
  );
}

export function Transcript({ lines, streaming }: { lines: readonly ChatLine[]; streaming: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [lines]);
  const lastAssistant = lines.length > 0 && lines[lines.length - 1].role === 'assistant' ? lines.length - 1 : -1;
  return (
    <div
      ref={box}
      className="transcript"
      data-testid="session-transcript"
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
      }}
    >
      {lines.map((line, i) =>
        line.role === 'user' ? (
          <UserMessage key={i} text={line.text} />
        ) : (
          <div key={i} className={`msg assistant${streaming && i === lastAssistant ? ' streaming' : ''}`} {...(i === lastAssistant ? { 'data-testid': 'session-output' } : {})}>
            {line.text}
          </div>
        ),
      )}
    </div>
  );
}
