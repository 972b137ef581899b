// A one-consumer async channel: producers push, close or fail; the consumer iterates with for await.
// Not a general stream library: no back-pressure (the engine never waits for a reader).

export class Channel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private done = false;
  private failure: { error: unknown } | null = null;
  private wake: (() => void) | null = null;

  /** `onReturn` runs when the consumer stops early (break, return, throw inside for await). */
  constructor(private readonly onReturn: () => void = () => {}) {}

  push(value: T): void {
    if (this.done) return;
    this.buffer.push(value);
    this.notify();
  }

  close(): void {
    this.done = true;
    this.notify();
  }

  /** Ends the stream with `error` after the values already pushed are read. */
  fail(error: unknown): void {
    if (this.done) return;
    this.failure = { error };
    this.done = true;
    this.notify();
  }

  get closed(): boolean {
    return this.done;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    let finished = false;
    try {
      for (;;) {
        if (this.buffer.length > 0) {
          yield this.buffer.shift()!;
          continue;
        }
        if (this.done) {
          finished = true;
          if (this.failure) throw this.failure.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      if (!finished) this.onReturn();
    }
  }
}
