// The EngineLink a BrowserEngine talks through: every call a promise (a released comlink proxy throws
// synchronously), every call refused once the engine is closed, and a dropped tab reported. No comlink.
import type { EngineLink } from './completions';
import { TAB_EXPIRED_ERROR_NAME } from '../protocol/tab-errors';

/** Whether `err` is the shared worker's refusal of a call from a tab it dropped for silence. */
export function isTabExpired(err: unknown): boolean {
  return err instanceof Error && err.name === TAB_EXPIRED_ERROR_NAME;
}

type Verb = (...args: unknown[]) => Promise<unknown>;

export class LinkGuard {
  readonly link: EngineLink;
  /**
   * Where the shared worker dropped this tab (the first refused call reports it): the link to use
   * instead. Calls made meanwhile wait for it; where it fails, every call rejects with why.
   */
  onExpired: ((error: Error) => Promise<EngineLink>) | null = null;
  private inner: EngineLink;
  /** Bumped when a drop is reported and when the link is replaced: refusals of older calls are not news. */
  private generation = 0;
  private replacing: Promise<void> | null = null;
  private closedWith: Error | null = null;
  private readonly pending = new Set<(error: Error) => void>();

  constructor(inner: EngineLink) {
    this.inner = inner;
    // any verb by name, as the link it guards (remote.ts's has no list of them either)
    this.link = new Proxy({} as EngineLink, {
      get: (_target, key) => {
        // `then` stays undefined, or awaiting something that returns the link would call the worker
        if (typeof key !== 'string' || key === 'then') return undefined;
        return (...args: unknown[]) => this.call(key as keyof EngineLink, args);
      },
    });
  }

  /** Every call waiting for an answer, and every later one, rejects with `error`: the worker will not answer. */
  close(error: Error): void {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const reject of [...this.pending]) reject(error);
    this.pending.clear();
  }

  get closed(): boolean {
    return this.closedWith !== null;
  }

  private call(verb: keyof EngineLink, args: unknown[]): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      this.pending.add(reject);
      const send = () => {
        if (this.closedWith) return reject(this.closedWith);
        const generation = this.generation;
        let answer: Promise<unknown>;
        try {
          answer = (this.inner[verb] as Verb)(...args);
        } catch (err) {
          answer = Promise.reject(err); // a released comlink proxy throws instead of rejecting
        }
        answer.then(
          (value) => {
            this.pending.delete(reject);
            resolve(value);
          },
          (err: unknown) => {
            this.pending.delete(reject);
            if (generation === this.generation && isTabExpired(err)) this.expired(err as Error);
            reject(err);
          },
        );
      };
      if (this.replacing) void this.replacing.then(send);
      else send();
    });
  }

  private expired(error: Error): void {
    this.generation++;
    if (!this.onExpired) return;
    const replacement = this.onExpired(error);
    // calls onExpired made (closing the dropped sessions) went to the dropped link: their refusals are not news
    this.generation++;
    this.replacing = replacement.then(
      (inner) => {
        this.inner = inner;
        this.generation++;
      },
      (failure: unknown) => this.close(failure instanceof Error ? failure : new Error(String(failure))),
    );
    void this.replacing.finally(() => (this.replacing = null));
  }
}
