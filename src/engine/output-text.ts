// OutputText: turns a request's generated token ids into streamed text deltas and finds stop
// strings. It never sees EOS handling or token limits; the request decides when it is finished.
import type { Tokenizer } from './types';

/** Prompt tokens decoded before the first output token, so a leading space/merge decodes right. */
const NUM_CONTEXT_TOKENS = 6;

export class OutputText {
  private readonly tokenizer: Tokenizer;
  private readonly stopStrings: string[];
  private readonly maxStopLength: number;
  /** Context tokens followed by generated ones. */
  private readonly ids: number[];
  private prefixOffset = 0;
  private readOffset: number;
  /** Decoded text so far (cut at a stop string once one is found). */
  private text = '';
  /** Length of text already handed out as deltas. */
  private numEmitted = 0;
  private stopped = false;

  constructor(tokenizer: Tokenizer, stopStrings: readonly string[], promptTail: readonly number[] = []) {
    this.tokenizer = tokenizer;
    this.stopStrings = stopStrings.filter((s) => s.length > 0);
    this.maxStopLength = this.stopStrings.reduce((m, s) => Math.max(m, s.length), 0);
    this.ids = promptTail.slice(-NUM_CONTEXT_TOKENS);
    this.readOffset = this.ids.length;
  }

  /** Everything emitted so far. */
  get emittedText(): string {
    return this.text.slice(0, this.numEmitted);
  }

  /** Appends one generated token; returns the new text to show and whether a stop string hit. */
  push(tokenId: number): { delta: string; stopped: boolean } {
    if (this.stopped) return { delta: '', stopped: true };
    this.ids.push(tokenId);
    const before = this.text.length;
    this.decodeNew(false);
    if (this.maxStopLength > 0 && this.text.length > before) {
      // a match must end in the new text, so it starts at most maxStopLength-1 chars before it
      const from = Math.max(0, before - this.maxStopLength + 1);
      let cut = -1;
      for (const s of this.stopStrings) {
        const at = this.text.indexOf(s, from);
        if (at >= 0 && (cut < 0 || at < cut)) cut = at;
      }
      if (cut >= 0) {
        this.text = this.text.slice(0, cut);
        this.stopped = true;
        return { delta: this.emitUpTo(this.text.length), stopped: true };
      }
    }
    return { delta: this.emitUpTo(this.text.length - this.heldBackLength()), stopped: false };
  }

  /** At the end of a request: the text still held back (partial stop string, pending bytes). */
  flush(): string {
    if (!this.stopped) this.decodeNew(true);
    return this.emitUpTo(this.text.length);
  }

  private decodeNew(final: boolean): void {
    const prefixText = this.tokenizer.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const newText = this.tokenizer.decode(this.ids.slice(this.prefixOffset));
    // a trailing U+FFFD is an unfinished multi-byte character: wait for its next token
    if (newText.length > prefixText.length && (final || !newText.endsWith('\uFFFD'))) {
      this.text += newText.slice(prefixText.length);
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
    }
  }

  /** Length of the longest tail of the text that could still grow into a stop string. */
  private heldBackLength(): number {
    const maxLen = Math.min(this.maxStopLength - 1, this.text.length - this.numEmitted);
    for (let len = maxLen; len > 0; len--) {
      const tail = this.text.slice(this.text.length - len);
      if (this.stopStrings.some((s) => s.startsWith(tail))) return len;
    }
    return 0;
  }

  private emitUpTo(end: number): string {
    if (end <= this.numEmitted) return '';
    const delta = this.text.slice(this.numEmitted, end);
    this.numEmitted = end;
    return delta;
  }
}
