// Tool calls read out of a reply's text as it streams: Qwen/Hermes `<tool_call>{...}</tool_call>`,
// and a reply that is JSON calls (Llama 3.1's `{"name", "parameters"}`, the plain rendering's `{"name", "arguments"}`).
import type { ToolCall } from '../protocol/api';
import { TOOL_CALL_FORMATS } from '../protocol/tool-call-format';

export type ToolCallEvent = { kind: 'text'; text: string } | { kind: 'call'; call: ToolCall };

// every format's call is read, whichever the model has: a tagged one anywhere, a JSON one opening the reply
const OPEN = TOOL_CALL_FORMATS.hermes.open;
const CLOSE = TOOL_CALL_FORMATS.hermes.close;
/** The arguments' keys the formats use, in the order they are looked for. */
const ARGUMENT_KEYS = [...new Set(Object.values(TOOL_CALL_FORMATS).map((f) => f.argumentsKey))];

/**
 * Feeds on a reply's text piece by piece and says what is text and what is a call. Text that may
 * still become a call (a reply opening with `{`, a `<tool_call>` not yet closed, a tail that may
 * be the start of one) is held back until it is known; text that was no call comes out exactly
 * as it came in. Whitespace around calls is dropped. A call names one of `names`, with arguments
 * an object (a JSON string of one is read too); anything else is text.
 */
export class ToolCallParser {
  private mode: 'lead' | 'text' | 'tag' | 'json' | 'between' = 'lead';
  /** Text not yet said, read from the start in the current mode. */
  private held = '';
  /** Whitespace before a possible call: dropped if a call follows, said as text if not. */
  private space = '';
  /** JSON scan of `held` in 'json' mode: where it stopped and what it was inside. */
  private scan = { pos: 0, depth: 0, inString: false, escaped: false };
  private made = 0;
  private readonly maxCalls: number;
  private readonly newId: () => string;

  /** `maxCalls`: once that many calls are read, the rest of the reply is dropped (parallel_tool_calls false). */
  constructor(
    private readonly names: ReadonlySet<string>,
    options: { maxCalls?: number; newId?: () => string } = {},
  ) {
    this.maxCalls = options.maxCalls ?? Infinity;
    this.newId = options.newId ?? (() => `call_${randomId()}`);
  }

  /** Calls found so far. */
  get numCalls(): number {
    return this.made;
  }

  push(text: string): ToolCallEvent[] {
    if (this.made >= this.maxCalls) return [];
    this.held += text;
    const out: ToolCallEvent[] = [];
    this.run(out, false);
    return out;
  }

  /** The reply has ended: what was held back is a call or text now. */
  end(): ToolCallEvent[] {
    const out: ToolCallEvent[] = [];
    this.run(out, true);
    return out;
  }

  private run(out: ToolCallEvent[], final: boolean): void {
    const say = (text: string) => {
      if (text.length === 0) return;
      const last = out[out.length - 1];
      if (last?.kind === 'text') last.text += text;
      else out.push({ kind: 'text', text });
    };
    const call = (c: ToolCall) => {
      out.push({ kind: 'call', call: c });
      this.made++;
      this.space = '';
    };
    for (;;) {
      if (this.made >= this.maxCalls) {
        this.held = '';
        return;
      }
      if (this.mode === 'lead' || this.mode === 'between') {
        // 'between' follows a JSON call: separators (whitespace, ';' or ',') before the next are dropped
        const skip = this.mode === 'lead' ? /^\s*/ : /^[\s;,]*/;
        const n = skip.exec(this.held)![0].length;
        if (n === this.held.length) {
          // all separators so far: a lead waits for more (and is text at the end); 'between' drops them
          if (this.mode === 'lead' && !final) return;
          if (this.mode === 'lead') say(this.held);
          this.held = '';
          return;
        }
        if (this.mode === 'lead') this.space = this.held.slice(0, n);
        this.held = this.held.slice(n);
        this.mode = this.held.startsWith('{') ? 'json' : 'text';
        this.scan = { pos: 0, depth: 0, inString: false, escaped: false };
        continue;
      }
      if (this.mode === 'json') {
        const end = this.scanObject();
        if (end < 0) {
          if (!final) return;
          this.mode = 'text'; // never closed: text
          continue;
        }
        const found = this.toCall(this.held.slice(0, end));
        if (found) {
          call(found);
          this.held = this.held.slice(end);
          this.mode = 'between';
        } else {
          this.mode = 'text'; // text mode says it all, the space before it first
        }
        continue;
      }
      if (this.mode === 'text') {
        const at = this.held.indexOf(OPEN);
        // say the text before a tag (or all but a tail that may begin one), its trailing space held
        const ready = at >= 0 ? this.held.slice(0, at) : this.held.slice(0, this.held.length - (final ? 0 : openPrefixAtEnd(this.held)));
        const trailing = /\s*$/.exec(ready)![0];
        const body = ready.slice(0, ready.length - trailing.length);
        if (body.length > 0) {
          say(this.space + body);
          this.space = trailing;
        } else this.space += trailing;
        if (at >= 0) {
          this.held = this.held.slice(at + OPEN.length);
          this.mode = 'tag';
          continue;
        }
        this.held = this.held.slice(ready.length);
        if (final && this.made === 0) say(this.space);
        if (final) this.space = '';
        return;
      }
      // 'tag': inside <tool_call>, until </tool_call> (or the reply's end, where a model may stop without it)
      const close = this.held.indexOf(CLOSE);
      if (close < 0 && !final) return;
      const inner = close < 0 ? this.held : this.held.slice(0, close);
      const found = this.toCall(inner.trim());
      if (found) call(found);
      else {
        say(this.space + OPEN + inner + (close < 0 ? '' : CLOSE));
        this.space = '';
      }
      this.held = close < 0 ? '' : this.held.slice(close + CLOSE.length);
      this.mode = 'text';
      if (close < 0) return;
    }
  }

  /** Scans `held` (a '{' first) on from where it stopped: the index past the object's closing '}', or -1. */
  private scanObject(): number {
    const s = this.scan;
    for (; s.pos < this.held.length; s.pos++) {
      const c = this.held[s.pos]!;
      if (s.inString) {
        if (s.escaped) s.escaped = false;
        else if (c === '\\') s.escaped = true;
        else if (c === '"') s.inString = false;
      } else if (c === '"') s.inString = true;
      else if (c === '{' || c === '[') s.depth++;
      else if (c === '}' || c === ']') {
        s.depth--;
        if (s.depth === 0) return ++s.pos;
      }
    }
    return -1;
  }

  private toCall(text: string): ToolCall | null {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
    if (!isRecord(value) || typeof value.name !== 'string' || !this.names.has(value.name)) return null;
    const key = ARGUMENT_KEYS.find((k) => k in value);
    let args: unknown = key !== undefined ? value[key] : {};
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        return null;
      }
    }
    if (!isRecord(args)) return null;
    return { id: this.newId(), type: 'function', function: { name: value.name, arguments: JSON.stringify(args) } };
  }
}

/** How many of the text's last characters could begin `<tool_call>` (held back until known). */
function openPrefixAtEnd(text: string): number {
  for (let n = Math.min(OPEN.length - 1, text.length); n > 0; n--) {
    if (OPEN.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/** A whole reply's text and calls: content null when the calls are all it holds. */
export function parseToolCalls(text: string, names: ReadonlySet<string>, options: { maxCalls?: number; newId?: () => string } = {}): { content: string | null; calls: ToolCall[] } {
  const parser = new ToolCallParser(names, options);
  const events = [...parser.push(text), ...parser.end()];
  const calls = events.flatMap((e) => (e.kind === 'call' ? [e.call] : []));
  const content = events.map((e) => (e.kind === 'text' ? e.text : '')).join('');
  return { content: calls.length > 0 && content.trim() === '' ? null : content, calls };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function randomId(): string {
  return globalThis.crypto?.randomUUID?.().replace(/-/g, '').slice(0, 24) ?? Math.random().toString(36).slice(2);
}
