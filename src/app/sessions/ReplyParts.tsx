// Two ways a reply shows other than as plain text: tool calls as cards (derive/tool-calls.ts), and
// tokens shaded by probability with their alternatives (derive/token-shading.ts). Text nodes only.
import { useId, useRef, useState, type CSSProperties, type KeyboardEvent } from 'react';
import type { TokenLogprob } from '../../protocol/events';
import { describeToken, replyConfidence, shadeOf } from '../derive/token-shading';
import type { ParsedToolCalls } from '../derive/tool-calls';

export function ToolCallCards({ parsed }: { parsed: ParsedToolCalls }) {
  return (
    <div className="tool-calls">
      {parsed.text && <div className="msg-text">{parsed.text}</div>}
      {parsed.calls.map((call, i) => (
        <div key={i} className="tool-call" data-testid="tool-call" data-name={call.name}>
          <div className="tool-call-head">
            <span className="muted small">tool call</span> <code>{call.name}</code>
          </div>
          <pre className="tool-call-args">{call.arguments}</pre>
        </div>
      ))}
    </div>
  );
}

const HINT = 'Hover a token, or focus the reply and use the arrow keys, for its probability and alternatives.';

/**
 * The reply's tokens, each shaded the stronger the less likely it was. One tab stop: the arrow
 * keys move between tokens (a roving tabindex), and the line under them says the one hovered or
 * focused, which each token also names as its description.
 */
export function ShadedTokens({ tokens, folded }: { tokens: readonly TokenLogprob[]; folded: boolean }) {
  const detailId = useId();
  const [active, setActive] = useState<number | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const focusToken = (i: number) => {
    const clamped = Math.max(0, Math.min(tokens.length - 1, i));
    setActive(clamped);
    (box.current?.children[clamped] as HTMLElement | undefined)?.focus();
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const at = active ?? 0;
    const moves: Record<string, number> = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tokens.length - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    focusToken(moves[e.key]!);
  };
  const summary = replyConfidence(tokens);
  const tabStop = active !== null && active < tokens.length ? active : 0;
  return (
    <>
      <div ref={box} className={folded ? 'msg-text shaded folded' : 'msg-text shaded'} data-testid="token-shading" onKeyDown={onKey}>
        {tokens.map((t, i) => (
          <span
            key={i}
            className="tok"
            tabIndex={i === tabStop ? 0 : -1}
            style={{ '--shade': shadeOf(t.logprob) } as CSSProperties}
            title={describeToken(t)}
            aria-describedby={detailId}
            data-testid="token"
            data-logprob={t.logprob}
            onFocus={() => setActive(i)}
            onMouseEnter={() => setActive(i)}
          >
            {t.token}
          </span>
        ))}
      </div>
      <p id={detailId} className="token-detail small" aria-live="polite" data-testid="token-detail">
        {active !== null && tokens[active] ? describeToken(tokens[active]) : summary ? `${tokens.length} tokens · mean probability ${(summary.meanProbability * 100).toFixed(1)}% · ${summary.numUnsure} under 50%. ${HINT}` : HINT}
      </p>
    </>
  );
}
