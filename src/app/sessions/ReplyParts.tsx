// Two ways a reply shows other than as plain text: tool calls as cards (derive/tool-calls.ts), and
// tokens shaded by probability with their alternatives (derive/token-shading.ts). Text nodes only.
import { useId, useMemo, useRef, useState, type CSSProperties, type KeyboardEvent } from 'react';
import type { TokenLogprob } from '../../protocol/events';
import { describeSegment, replyConfidence, segmentLogprob, shadeOf, tokenSegments } from '../derive/token-shading';
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
 * The reply cut at its tokens (derive/token-shading.ts's segments), each shaded the stronger the
 * less likely it was. One tab stop: the arrow keys move between tokens (a roving tabindex), and
 * the line under them says the one hovered or focused, which each token also names as its description.
 */
export function ShadedTokens({ text, tokens, folded }: { text: string; tokens: readonly TokenLogprob[]; folded: boolean }) {
  const detailId = useId();
  const [active, setActive] = useState<number | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const segments = useMemo(() => tokenSegments(text, tokens), [text, tokens]);
  const shaded = segments.filter((s) => s.tokens.length > 0).length;
  const focusToken = (i: number) => {
    const clamped = Math.max(0, Math.min(shaded - 1, i));
    setActive(clamped);
    box.current?.querySelectorAll<HTMLElement>('.tok')[clamped]?.focus();
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const at = active ?? 0;
    const moves: Record<string, number> = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: shaded - 1 };
    if (!(e.key in moves)) return;
    e.preventDefault();
    focusToken(moves[e.key]!);
  };
  const summary = replyConfidence(tokens);
  const tabStop = active !== null && active < shaded ? active : 0;
  let n = -1;
  const activeSegment = active === null ? undefined : segments.filter((s) => s.tokens.length > 0)[active];
  return (
    <>
      <div ref={box} className={folded ? 'msg-text shaded folded' : 'msg-text shaded'} data-testid="token-shading" onKeyDown={onKey}>
        {segments.map((segment, i) => {
          if (segment.tokens.length === 0) return <span key={i}>{segment.text}</span>;
          const k = ++n;
          const logprob = segmentLogprob(segment);
          return (
            <span
              key={i}
              className="tok"
              tabIndex={k === tabStop ? 0 : -1}
              style={{ '--shade': shadeOf(logprob) } as CSSProperties}
              title={describeSegment(segment)}
              aria-describedby={detailId}
              data-testid="token"
              data-logprob={logprob}
              onFocus={() => setActive(k)}
              onMouseEnter={() => setActive(k)}
            >
              {segment.text}
            </span>
          );
        })}
      </div>
      <p id={detailId} className="token-detail small" aria-live="polite" data-testid="token-detail">
        {activeSegment ? describeSegment(activeSegment) : summary ? `${tokens.length} tokens · mean probability ${(summary.meanProbability * 100).toFixed(1)}% · ${summary.numUnsure} under 50%. ${HINT}` : HINT}
      </p>
    </>
  );
}
