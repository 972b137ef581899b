// The shared engine worker seen through the browser's DevTools protocol: its JS heap, its console
// errors and how many worker targets the origin has had (a second one is a restart). Reads only.
import type { Browser, CDPSession } from '@playwright/test';

interface Message {
  id?: number;
  method?: string;
  params?: { type?: string; args?: Array<{ value?: unknown; description?: string }>; exceptionDetails?: { text?: string; exception?: { description?: string } }; entry?: { level?: string; text?: string; url?: string } };
  result?: unknown;
  error?: { message: string };
}

/**
 * Playwright has no handle on shared workers, so this attaches to the target from a browser-level
 * session (non-flat: messages travel inside Target.sendMessageToTarget) and speaks CDP to it.
 */
export class WorkerTarget {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  private readonly seen = new Set<string>();
  private sessionId = '';
  /** The heap snapshot being streamed, chunk by chunk, when one is asked for. */
  private snapshotChunks: string[] | null = null;

  private constructor(
    private readonly browserSession: CDPSession,
    private readonly onError: (line: string) => void,
  ) {}

  static async attach(browser: Browser, onError: (line: string) => void): Promise<WorkerTarget> {
    const target = new WorkerTarget(await browser.newBrowserCDPSession(), onError);
    await target.start();
    return target;
  }

  private async start(): Promise<void> {
    const session = this.browserSession;
    session.on('Target.targetCreated', ({ targetInfo }) => void (targetInfo.type === 'shared_worker' && this.seen.add(targetInfo.targetId)));
    session.on('Target.receivedMessageFromTarget', ({ sessionId, message }) => {
      if (sessionId !== this.sessionId) return;
      this.handle(JSON.parse(message) as Message);
    });
    await session.send('Target.setDiscoverTargets', { discover: true });
    const { targetInfos } = await session.send('Target.getTargets');
    const workers = targetInfos.filter((t) => t.type === 'shared_worker');
    if (workers.length !== 1) throw new Error(`expected one shared engine worker, found ${workers.length}`);
    for (const w of workers) this.seen.add(w.targetId);
    this.sessionId = (await session.send('Target.attachToTarget', { targetId: workers[0]!.targetId, flatten: false })).sessionId;
    await this.send('Runtime.enable');
    await this.send('Log.enable');
  }

  private handle(message: Message): void {
    if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message);
      return;
    }
    if (message.method === 'HeapProfiler.addHeapSnapshotChunk') {
      this.snapshotChunks?.push((message.params as { chunk: string }).chunk);
      return;
    }
    const params = message.params;
    if (message.method === 'Runtime.consoleAPICalled' && (params?.type === 'error' || params?.type === 'assert')) {
      this.onError((params.args ?? []).map((a) => String(a.value ?? a.description ?? '')).join(' '));
    } else if (message.method === 'Runtime.exceptionThrown') {
      this.onError(`uncaught ${params?.exceptionDetails?.exception?.description ?? params?.exceptionDetails?.text ?? ''}`);
    } else if (message.method === 'Log.entryAdded' && params?.entry?.level === 'error') {
      this.onError(`${params.entry.text ?? ''} ${params.entry.url ?? ''}`.trim());
    }
  }

  send(method: string, params: object = {}): Promise<Message> {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.browserSession.send('Target.sendMessageToTarget', { sessionId: this.sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
    });
  }

  /** JS heap used after a forced GC, bytes. */
  async heapUsedBytes(): Promise<number> {
    await this.send('HeapProfiler.collectGarbage');
    return ((await this.send('Runtime.getHeapUsage')).result as { usedSize: number }).usedSize;
  }

  /**
   * A V8 heap snapshot of the worker (JSON text, several MB), for finding what a long run keeps:
   * node ids are stable within one worker, so objects with ids past an earlier snapshot's are new.
   */
  async heapSnapshot(): Promise<string> {
    this.snapshotChunks = [];
    try {
      await this.send('HeapProfiler.enable');
      await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      return this.snapshotChunks.join('');
    } finally {
      this.snapshotChunks = null;
    }
  }

  /** Shared worker targets seen beyond the first: each is the engine worker started again. */
  restarts(): number {
    return this.seen.size - 1;
  }

  async detach(): Promise<void> {
    await this.browserSession.detach().catch(() => undefined);
  }
}
