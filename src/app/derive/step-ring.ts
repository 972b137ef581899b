// A fixed-capacity ring buffer for the most recent StepEvents, kept outside React state.
// Not reactive: readers re-read it when the telemetry store's version counter moves.
import type { StepEvent } from '../../protocol/events';

/** A StepEvent as the page received it; receivedAtMs is the page clock (performance.now()). */
export interface ReceivedStep {
  event: StepEvent;
  receivedAtMs: number;
}

export class StepRing<T> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private length = 0;
  private pushed = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`ring capacity must be a positive integer, not ${capacity}`);
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.length;
  }

  /** Items ever pushed since the last clear (the oldest may have been overwritten). */
  get totalPushed(): number {
    return this.pushed;
  }

  push(item: T): void {
    const end = (this.start + this.length) % this.capacity;
    this.items[end] = item;
    if (this.length < this.capacity) this.length++;
    else this.start = (this.start + 1) % this.capacity;
    this.pushed++;
  }

  /** Oldest first. */
  toArray(): T[] {
    const out: T[] = new Array(this.length);
    for (let i = 0; i < this.length; i++) out[i] = this.items[(this.start + i) % this.capacity] as T;
    return out;
  }

  last(): T | undefined {
    return this.length === 0 ? undefined : this.items[(this.start + this.length - 1) % this.capacity];
  }

  clear(): void {
    this.items.fill(undefined);
    this.start = 0;
    this.length = 0;
    this.pushed = 0;
  }
}
