// Incremental detokenization for token streaming: ids arrive one at a time, text leaves only
// once it is complete UTF-8. Not a tokenizer: it wraps any decode(ids) function.

import type { DecodeOptions } from './tokenizer';

export interface Detokenizer {
  decode(ids: ArrayLike<number>, options?: DecodeOptions): string;
}

/** A byte-level or byte-fallback token can end mid-character; the decoder renders that as U+FFFD. */
const REPLACEMENT_CHAR = '\uFFFD';

/**
 * Decodes a short window of recent ids rather than single ids, because decoders look at
 * neighbours (a leading "▁" becomes a space only after another token). The emitted text is
 * what the window gained over its prefix. The scheme follows text-generation-inference's
 * decode_token, with the window kept as its own array: ids[0..readOffset) were emitted last
 * time (context only), ids[readOffset..] are pending.
 */
export class StreamDecoder {
  private readonly tokenizer: Detokenizer;
  private readonly options: DecodeOptions;
  /** [windowLength] the last emitted run of ids, then the pending ones. */
  private ids: number[] = [];
  private readOffset = 0;

  constructor(tokenizer: Detokenizer, options: DecodeOptions = {}) {
    this.tokenizer = tokenizer;
    this.options = options;
  }

  /** Adds one id; returns the newly completed text ('' while a character is still split). */
  push(id: number): string {
    this.ids.push(id);
    const prefixText = this.tokenizer.decode(this.ids.slice(0, this.readOffset), this.options);
    const newText = this.tokenizer.decode(this.ids, this.options);
    if (newText.length > prefixText.length && !newText.endsWith(REPLACEMENT_CHAR)) {
      const emitted = newText.slice(prefixText.length);
      // The ids just emitted become the next window's prefix; everything before them goes.
      this.ids = this.ids.slice(this.readOffset);
      this.readOffset = this.ids.length;
      return emitted;
    }
    return '';
  }

  /** Text still held back at the end of a stream (an unfinished character shows as U+FFFD). */
  flush(): string {
    const prefixText = this.tokenizer.decode(this.ids.slice(0, this.readOffset), this.options);
    const newText = this.tokenizer.decode(this.ids, this.options);
    this.ids = [];
    this.readOffset = 0;
    return newText.length > prefixText.length ? newText.slice(prefixText.length) : '';
  }
}
