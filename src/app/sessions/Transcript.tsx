// One pane's conversation as plain text (React text nodes only: model output is never HTML),
// kept scrolled to the newest tokens unless the reader scrolled up.
import { useLayoutEffect, useRef } from 'react';
import { summarizePrompt } from '../derive/niah-plan';
import type { ChatLine } from '../derive/session-view';

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
          <div key={i} className="msg user" title={line.text.length > 400 ? `${line.text.length.toLocaleString('en-US')} characters` : undefined}>
            {summarizePrompt(line.text)}
          </div>
        ) : (
          <div key={i} className={`msg assistant${streaming && i === lastAssistant ? ' streaming' : ''}`} {...(i === lastAssistant ? { 'data-testid': 'session-output' } : {})}>
            {line.text}
          </div>
        ),
      )}
    </div>
  );
}
