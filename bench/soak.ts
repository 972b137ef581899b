// The soak: three tabs of one origin on the shared engine worker (testing/library.html's cohortSoak)
// plus two playground tabs, random clients for a set time, with a frozen tab, a closed tab, model
// reloads and playground reloads (messages sent against those kept). No files, no asserts.
import type { Browser, BrowserContext, CDPSession, Page } from '@playwright/test';
import { makeNiahSuite, seededRandom } from '../src/protocol/niah';
import type { SoakOutcome, SoakRequest } from '../testing/library/soak';
import { countPresent, tallyErrors, type Disturbance, type PlaygroundOutcome, type RequestEnd, type Sample, type SentMessage, type ShownPanes, type SoakReport } from './soak-report';
import { WorkerTarget } from './soak-worker-target';

export interface SoakOptions {
  baseURL: string;
  durationMs: number;
  seed: number;
  sampleEveryMs: number;
  /** Short, so a frozen tab is ended within the run. */
  heartbeat: { intervalMs: number; timeoutMs: number };
  requestDeadlineMs: number;
  clientsPerTab: number;
  playground: boolean;
  commit: string;
  log: (line: string) => void;
  /** Heap snapshots of the steady tab and the worker at the first sample past `afterMs` and at the last sample, handed to `write`. */
  heapSnapshots?: { afterMs: number; write: (target: 'page' | 'worker', phase: 'start' | 'end', json: string) => void };
}

/** Every disturbance (freeze, reload, close) happens once per cycle of this length, or once in a shorter run. */
export const CYCLE_MS = 180_000;
const NUM_TABS = 3;
/** Playground tabs: one browser profile, so they share their saved panes and keep them in step. */
const NUM_PLAYGROUND_TABS = 2;
/** A page call can outlive its page-side deadline only if the page is frozen or gone: this bounds it too. */
const PAGE_CALL_SLACK_MS = 30_000;

interface Tab {
  slot: number;
  page: Page;
  cdp: CDPSession;
  /** Resolves when the tab may take requests (after a rejoin or a reopen). */
  ready: Promise<void>;
  /** Bumped when the page is replaced, so requests know whether their tab was closed under them. */
  generation: number;
}

interface Span {
  kind: Disturbance;
  /** The tab it hit; null: every tab (a reload). */
  slot: number | null;
  startMs: number;
  endMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** A page's V8 heap snapshot (JSON text), streamed in chunks over its CDP session. */
async function pageHeapSnapshot(cdp: CDPSession): Promise<string> {
  const chunks: string[] = [];
  const onChunk = ({ chunk }: { chunk: string }) => void chunks.push(chunk);
  cdp.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  try {
    await cdp.send('HeapProfiler.enable');
    await cdp.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    return chunks.join('');
  } finally {
    cdp.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
  }
}

export async function runSoak(browser: Browser, options: SoakOptions): Promise<SoakReport> {
  const random = seededRandom(options.seed);
  // the clock starts once every tab is up: the duration is the soak's, not the setup's
  let startMs = Date.now();
  const now = () => Date.now() - startMs;
  const endAtMs = options.durationMs;
  const consoleErrors: string[] = [];
  const events: SoakReport['events'] = [];
  const spans: Span[] = [];
  const ends: RequestEnd[] = [];
  const samples: Sample[] = [];
  /** The disturbances' own streams: waited for at the end (each is bounded by its deadline). */
  const longStreams: Array<Promise<RequestEnd>> = [];
  const event = (kind: string, detail = '') => {
    events.push({ atMs: now(), kind, detail });
    options.log(`${(now() / 1000).toFixed(1)} s ${kind} ${detail}`);
  };
  // NIAH prompts (the model's task) and plain text; any text works as load
  const prompts = [...makeNiahSuite(options.seed, 6, 120, 400).map((c) => c.prompt), 'hello there', 'Note 0001: this paragraph is unrelated padding.', 'What is the secret code?'];

  const context: BrowserContext = await browser.newContext();
  const watch = (page: Page, name: string) => {
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(`${name}: ${m.text()}`)));
    page.on('pageerror', (e) => consoleErrors.push(`${name}: uncaught ${e.message}`));
  };
  const openTab = async (slot: number, generation: number): Promise<Tab> => {
    const page = await context.newPage();
    watch(page, `tab ${slot}`);
    await page.goto(`${options.baseURL}/testing/library.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    const kind = await page.evaluate((heartbeat) => window.cohortSoak.start({ heartbeat }), options.heartbeat);
    if (kind !== 'shared') throw new Error(`tab ${slot} got a ${kind} engine worker, not the shared one`);
    return { slot, page, cdp: await context.newCDPSession(page), ready: Promise.resolve(), generation };
  };
  const tabs: Tab[] = [];
  for (let slot = 0; slot < NUM_TABS; slot++) tabs.push(await openTab(slot, 0));
  const worker = await WorkerTarget.attach(browser, (line) => consoleErrors.push(`shared worker: ${line}`));
  const playgrounds: Page[] = [];
  for (let i = 0; options.playground && i < NUM_PLAYGROUND_TABS; i++) {
    const page = await context.newPage();
    watch(page, `playground ${i}`);
    await page.goto(`${options.baseURL}/`);
    await page.locator('[data-testid=model-info][data-state=ready]').waitFor({ timeout: 300_000 });
    playgrounds.push(page);
  }
  const playground = playgrounds[0] ?? null;
  startMs = Date.now();
  event('ready', `${NUM_TABS} tabs on one shared worker${playgrounds.length ? `, ${playgrounds.length} playground tabs` : ''}`);

  function randomRequest(): SoakRequest {
    const stream = random() < 0.7;
    const n = 1 + Math.floor(random() * 4);
    const request: SoakRequest = {
      params: {
        messages: [{ role: 'user', content: prompts[Math.floor(random() * prompts.length)]! }],
        max_tokens: 4 + Math.floor(random() * 28),
        n,
        temperature: random() < 0.5 ? 0 : 0.8,
        seed: Math.floor(random() * 1e6),
        ...(random() < 0.3 ? { stop: [random() < 0.5 ? ' ' : 'e'] } : {}),
      },
      stream,
      deadlineMs: options.requestDeadlineMs,
    };
    if (stream && random() < 0.25) request.abortAfterChunks = 1 + Math.floor(random() * 6);
    return request;
  }

  /** Runs one request in the tab and records how it ended. */
  async function track(tab: Tab, name: string, request: SoakRequest): Promise<RequestEnd> {
    const { page, generation } = tab;
    const sentMs = now();
    let outcome: SoakOutcome | null = null;
    let lost = false;
    try {
      outcome = await withDeadline(
        page.evaluate((r) => window.cohortSoak.request(r), request),
        request.deadlineMs + PAGE_CALL_SLACK_MS,
        name,
      );
    } catch (err) {
      if (tab.generation !== generation || page.isClosed()) lost = true;
      else outcome = { end: 'deadline', errorName: null, errorMessage: (err as Error).message, aborted: false, numChunks: 0, finishReasons: [], completionTokens: 0, elapsedMs: now() - sentMs };
    }
    const endMs = now();
    const disturbances = new Set<Disturbance>(outcome?.aborted ? ['aborted'] : []);
    for (const w of spans) if (w.startMs <= endMs && w.endMs >= sentMs && (w.slot === null || w.slot === tab.slot)) disturbances.add(w.kind);
    if (lost) disturbances.add('closed');
    const end: RequestEnd = {
      client: name,
      stream: request.stream,
      n: request.params.n ?? 1,
      end: lost ? 'lost' : outcome!.end,
      errorName: outcome?.errorName ?? null,
      errorMessage: outcome?.errorMessage ?? null,
      disturbances: [...disturbances],
      elapsedMs: endMs - sentMs,
      completionTokens: outcome?.completionTokens ?? 0,
    };
    ends.push(end);
    return end;
  }

  async function client(tab: Tab, index: number): Promise<void> {
    const name = `tab${tab.slot}.${index}`;
    while (now() < endAtMs) {
      await tab.ready;
      if (now() >= endAtMs) break;
      const end = await track(tab, name, randomRequest());
      // mostly back to back; now and then a pause as a person would leave; a refused request is retried after a moment
      if (end.end !== 'ok' && !end.disturbances.includes('aborted')) await sleep(500);
      else if (random() < 0.2) await sleep(Math.floor(random() * 1500));
    }
  }

  /** A stream long enough to be in flight when a disturbance hits its tab (or the engine). */
  function longStream(tab: Tab): Promise<RequestEnd> {
    const request: SoakRequest = { params: { messages: [{ role: 'user', content: prompts[0]! }], max_tokens: 400, ignore_eos: true }, stream: true, deadlineMs: options.requestDeadlineMs };
    const running = track(tab, `tab${tab.slot}.long`, request);
    longStreams.push(running);
    return running;
  }

  /** Starts a long stream in the tab and resolves once its first chunk has come (or after 10 s). */
  async function startLongStream(tab: Tab): Promise<{ running: Promise<RequestEnd> }> {
    const before = await tab.page.evaluate(() => window.cohortSoak.counters().chunks);
    const running = longStream(tab);
    for (let i = 0; i < 100 && (await tab.page.evaluate(() => window.cohortSoak.counters().chunks)) === before; i++) await sleep(100);
    return { running }; // wrapped: an async function would wait for the stream itself
  }

  const playgroundTurns: PlaygroundOutcome = { tabs: playgrounds.length, turns: 0, done: 0, failed: 0, errors: {}, reloads: [] };
  const countPlaygroundError = (why: string): void => void (playgroundTurns.errors[why] = (playgroundTurns.errors[why] ?? 0) + 1);
  /** Messages the playground clients saw in their panes (any tab), each marked so a reloaded tab can be searched for it. */
  const sentMessages: SentMessage[] = [];
  /** Set while the playground tabs reload: each client waits at the top of its loop, listed in idleClients. */
  let playgroundPaused = false;
  const idleClients = new Set<number>();

  /** Each client sends in a pane of its own (the tabs show each other's panes too), a new one when a turn fails. */
  async function playgroundClient(page: Page, tab: number): Promise<void> {
    let paneId: string | null = null;
    for (let n = 0; now() < endAtMs; n++) {
      // the check and leaving idleClients run together (no await between): a client the reload counts as idle is waiting
      idleClients.add(tab);
      while (playgroundPaused) await sleep(100);
      idleClients.delete(tab);
      if (now() >= endAtMs) break;
      playgroundTurns.turns++;
      try {
        if (paneId === null || (await page.locator(`[data-session-id="${paneId}"]`).count()) === 0) {
          const before = await page.getByTestId('session-pane').evaluateAll((panes) => panes.map((p) => p.getAttribute('data-session-id')));
          await page.getByTestId('add-session').click();
          // the pane this click opened takes the focus: a pane the other tab opened at the same moment arrives too, and is not this client's
          const opened = await page.waitForFunction((known) => {
            const id = document.activeElement?.closest('[data-testid="session-pane"]')?.getAttribute('data-session-id') ?? null;
            return id !== null && !known.includes(id) ? id : null;
          }, before, { timeout: 10_000, polling: 100 }).catch(() => null);
          paneId = opened ? ((await opened.jsonValue()) as string) : null;
          if (paneId === null) throw new Error('no new pane');
        }
        const pane = page.locator(`[data-session-id="${paneId}"]`);
        const marker = `[soak ${tab}.${n}]`;
        await pane.getByTestId('session-input').fill(`${marker} ${prompts[Math.floor(random() * prompts.length)]!}`);
        await pane.getByTestId('session-input').press('Enter');
        await page.waitForFunction((el) => el && /^(done|error|cancelled)$/.test(el.getAttribute('data-state') ?? ''), await pane.elementHandle(), { timeout: options.requestDeadlineMs, polling: 250 });
        const state = await pane.getAttribute('data-state');
        const lines = await pane.locator('.msg').evaluateAll((els) => els.map((m) => ({ user: m.classList.contains('user'), text: m.querySelector('.msg-text')?.textContent ?? '' })));
        const at = lines.findIndex((l) => l.user && l.text.startsWith(marker));
        // a message the page refused before any token went back to the composer: not sent
        if (at >= 0) sentMessages.push({ marker, answered: state === 'done' && !lines[at + 1]?.user && (lines[at + 1]?.text ?? '') !== '' });
        if (state === 'done') playgroundTurns.done++;
        else {
          playgroundTurns.failed++;
          const why = state === 'error' ? ((await pane.getByTestId('session-error').textContent({ timeout: 2000 }).catch(() => null)) ?? 'error') : (state ?? 'unknown');
          // numbers vary (token counts, positions): the kind of error is what is counted
          countPlaygroundError(why.replace(/\d+/g, 'N').slice(0, 120));
          // as a person would once a chat is full or broken: go on in a new pane (this one keeps its messages)
          paneId = null;
        }
      } catch (err) {
        playgroundTurns.failed++;
        countPlaygroundError(`driver: ${(err as Error).message.split('\n')[0]!.slice(0, 80)}`);
      }
      await sleep(2000 + Math.floor(random() * 3000));
    }
    idleClients.add(tab);
  }

  /** What a playground page shows: each pane's messages. */
  const shownPanes = (page: Page): Promise<ShownPanes> =>
    page.getByTestId('session-pane').evaluateAll((panes) => panes.map((p) => [...p.querySelectorAll('.msg')].map((m) => ({ role: m.classList.contains('user') ? ('user' as const) : ('assistant' as const), text: m.querySelector('.msg-text')?.textContent ?? '' }))));

  /**
   * The playground clients pause; once both tabs say every change is saved, each tab reloads in
   * turn and the messages it shows are counted against every message sent in either tab.
   */
  async function reloadPlaygrounds(): Promise<void> {
    playgroundPaused = true;
    try {
      do await sleep(200);
      while (idleClients.size < playgrounds.length && now() < endAtMs + options.requestDeadlineMs);
      event('playground reload', `${playgrounds.length} tabs, ${sentMessages.length} messages sent`);
      for (const [tab, page] of playgrounds.entries()) {
        for (const p of playgrounds) await p.locator('html[data-panes-pending=false]').waitFor({ timeout: 30_000 });
        await page.reload();
        await page.locator('[data-testid=model-info][data-state=ready]').waitFor({ timeout: 300_000 });
        await page.locator('html[data-panes-pending]').waitFor({ timeout: 30_000 });
        const count = countPresent(sentMessages, await shownPanes(page), now(), tab);
        playgroundTurns.reloads.push(count);
        event('playground reloaded', `tab ${tab}: ${count.present} of ${count.sent} messages, ${count.answeredPresent} of ${count.answered} answers${count.missing.length > 0 ? `; missing ${count.missing.join(' ')}` : ''}`);
      }
    } finally {
      playgroundPaused = false;
    }
  }

  /** Forces a GC in each target, then reads the heaps and the worker's live GPU buffers. */
  async function sample(): Promise<void> {
    const heap = async (cdp: CDPSession) => {
      await cdp.send('HeapProfiler.collectGarbage');
      return (await cdp.send('Runtime.getHeapUsage')).usedSize;
    };
    const gpu = await tabs[0]!.page.evaluate(() => window.cohortSoak.gpuMemory());
    const playgroundCdp = playground ? await context.newCDPSession(playground) : null;
    samples.push({
      atMs: now(),
      pageHeapBytes: await heap(tabs[0]!.cdp),
      workerHeapBytes: await worker.heapUsedBytes(),
      playgroundHeapBytes: playgroundCdp ? await heap(playgroundCdp) : null,
      gpuBytes: gpu.bytes,
      gpuBuffers: gpu.count,
    });
    await playgroundCdp?.detach();
    const s = samples.at(-1)!;
    options.log(`${(s.atMs / 1000).toFixed(0)} s sample: page ${(s.pageHeapBytes / 2 ** 20).toFixed(2)} MiB, worker ${(s.workerHeapBytes / 2 ** 20).toFixed(2)} MiB, GPU ${(s.gpuBytes / 2 ** 20).toFixed(1)} MiB in ${s.gpuBuffers} buffers, ${ends.length} requests`);
  }

  async function sampler(): Promise<void> {
    const snapshots = options.heapSnapshots;
    let tookStart = false;
    await sample();
    while (now() + options.sampleEveryMs < endAtMs) {
      await sleep(options.sampleEveryMs);
      await sample();
      if (snapshots && !tookStart && now() >= snapshots.afterMs) {
        tookStart = true;
        await takeSnapshots('start');
      }
    }
    if (snapshots && tookStart) await takeSnapshots('end');
  }

  async function takeSnapshots(phase: 'start' | 'end'): Promise<void> {
    options.heapSnapshots!.write('page', phase, await pageHeapSnapshot(tabs[0]!.cdp));
    options.heapSnapshots!.write('worker', phase, await worker.heapSnapshot());
  }

  /** Freezes tab 1 past its heartbeat timeout (the worker ends it), thaws it and has it join again. */
  async function freeze(tab: Tab): Promise<void> {
    let reopen!: () => void;
    tab.ready = new Promise((resolve) => (reopen = resolve));
    const { running: long } = await startLongStream(tab);
    const span: Span = { kind: 'frozen', slot: tab.slot, startMs: now(), endMs: Infinity };
    spans.push(span);
    event('freeze', `tab ${tab.slot} for ${options.heartbeat.timeoutMs + 2000} ms`);
    // The page's JavaScript stops, as in a hung tab: Chromium's lifecycle 'frozen' state keeps
    // timers running headless, so the heartbeat went on and the worker never dropped the tab.
    await tab.cdp.send('Debugger.enable');
    await tab.cdp.send('Debugger.pause');
    await sleep(options.heartbeat.timeoutMs + 2000);
    await tab.cdp.send('Debugger.resume');
    await tab.cdp.send('Debugger.disable');
    // let its in-flight calls see the ended connection before it joins again
    await sleep(1000);
    await tab.page.evaluate(() => window.cohortSoak.rejoin());
    span.endMs = now();
    event('thaw', `tab ${tab.slot} joined again`);
    reopen();
    void long.then((ended) => event('frozen stream ended', `${ended.end} ${ended.errorName ?? ''}`));
  }

  async function reload(): Promise<void> {
    const { running: long } = await startLongStream(tabs[0]!);
    const span: Span = { kind: 'reload', slot: null, startMs: now(), endMs: Infinity };
    spans.push(span);
    event('reload', 'unload + load of the embedded model, a long stream in flight');
    await tabs[0]!.page.evaluate(() => window.cohortSoak.reload());
    span.endMs = now();
    event('reloaded');
    void long.then((ended) => event('reloaded stream ended', `${ended.end} ${ended.errorName ?? ''}`));
  }

  /** Closes tab 2 while a long stream of its own is running, then opens a new one. */
  async function closeMidStream(tab: Tab): Promise<void> {
    let reopen!: () => void;
    tab.ready = new Promise((resolve) => (reopen = resolve));
    const { running: long } = await startLongStream(tab);
    const old = tab.page;
    tab.generation++;
    spans.push({ kind: 'closed', slot: tab.slot, startMs: now(), endMs: now() });
    event('close', `tab ${tab.slot}`);
    await old.close();
    const fresh = await openTab(tab.slot, tab.generation);
    tab.page = fresh.page;
    tab.cdp = fresh.cdp;
    event('reopen', `tab ${tab.slot}`);
    reopen();
    await long;
  }

  async function disturber(): Promise<void> {
    for (let cycleMs = 0; cycleMs < endAtMs; cycleMs += CYCLE_MS) {
      const length = Math.min(CYCLE_MS, endAtMs - cycleMs);
      const at = async (fraction: number) => {
        const wait = cycleMs + fraction * length - now();
        if (wait > 0) await sleep(wait);
      };
      await at(0.2 + 0.05 * random());
      await freeze(tabs[1]!);
      await at(0.45 + 0.05 * random());
      await reload();
      await at(0.65 + 0.05 * random());
      await closeMidStream(tabs[2]!);
      if (playgrounds.length > 0) {
        await at(0.8 + 0.05 * random());
        await reloadPlaygrounds();
      }
    }
  }

  await Promise.all([
    ...tabs.flatMap((tab) => Array.from({ length: options.clientsPerTab }, (_, i) => client(tab, i))),
    ...playgrounds.map((page, tab) => playgroundClient(page, tab)),
    sampler(),
    disturber(),
  ]);
  await Promise.all(longStreams);
  event('stopped', `${ends.length} requests`);

  // one last small request: its final step shows the blocks still held once every session is closed
  await tabs[0]!.page.evaluate(() => window.cohortSoak.request({ params: { messages: [{ role: 'user', content: 'hello there' }], max_tokens: 1 }, stream: false, deadlineMs: 60_000 }));
  const counters = await Promise.all(tabs.map((tab) => tab.page.evaluate(() => window.cohortSoak.counters())));
  const report: SoakReport = {
    date: new Date().toISOString().slice(0, 10),
    commit: options.commit,
    seed: options.seed,
    durationMs: now(),
    heartbeat: options.heartbeat,
    requestDeadlineMs: options.requestDeadlineMs,
    events,
    requests: {
      served: ends.filter((e) => e.end === 'ok').length,
      total: ends.length,
      byClient: Object.fromEntries(tabs.map((t) => [`tab${t.slot}`, ends.filter((e) => e.client.startsWith(`tab${t.slot}.`) && e.end === 'ok').length])),
      tokens: ends.reduce((sum, e) => sum + e.completionTokens, 0),
    },
    errors: tallyErrors(ends),
    consoleErrors,
    doubleEnds: counters.reduce((sum, c) => sum + c.doubleEnds, 0),
    // the closed tabs' pages are gone; their requests were counted as 'lost' above
    unended: counters.reduce((sum, c) => sum + c.started - c.ended, 0),
    samples,
    kvBlocksUsedAtEnd: counters[0]!.lastStep?.kvBlocksUsed ?? null,
    workerRestarts: worker.restarts(),
    playground: playgrounds.length > 0 ? playgroundTurns : null,
  };
  await worker.detach();
  await context.close();
  return report;
}
