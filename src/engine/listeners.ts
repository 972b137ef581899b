// Numbered subscriptions of one kind (steps, notices) and their fan-out: what every host hands out
// to subscribe()/unsubscribe(). A faulty listener is logged and skipped, never stops the others.

export class Listeners<T> {
  private readonly byId = new Map<number, (value: T) => void>();

  /** `what` names the kind in the log line of a failed listener. */
  constructor(private readonly what: string) {}

  add(id: number, listener: (value: T) => void): number {
    this.byId.set(id, listener);
    return id;
  }

  delete(id: number): void {
    this.byId.delete(id);
  }

  clear(): void {
    this.byId.clear();
  }

  emit(value: T): void {
    for (const listener of this.byId.values()) {
      try {
        listener(value);
      } catch (err) {
        console.error(`${this.what} subscriber failed`, err);
      }
    }
  }
}

/**
 * The subscribe / subscribeNotices / unsubscribe verbs every host serves, over one id counter:
 * hosts extend it and emit through `steps` and `notices`.
 */
export class Subscriptions<Step, Notice> {
  protected readonly steps = new Listeners<Step>('step');
  protected readonly notices = new Listeners<Notice>('notice');
  private nextListenerId = 1;

  async subscribe(onStep: (event: Step) => void): Promise<number> {
    return this.steps.add(this.nextListenerId++, onStep);
  }

  async subscribeNotices(onNotice: (notice: Notice) => void): Promise<number> {
    return this.notices.add(this.nextListenerId++, onNotice);
  }

  async unsubscribe(id: number): Promise<void> {
    this.steps.delete(id);
    this.notices.delete(id);
  }
}
