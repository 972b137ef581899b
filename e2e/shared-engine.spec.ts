// One engine for every tab: two pages of one browser context join the same shared engine worker
// (their rows ride in the same steps); a page that closes, terminates or crashes has its sessions ended.
// The heartbeat is the spec's to drive: no page's silence can end its sessions before the spec says.
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import type { PlainStep } from '../testing/library/main';
import { openLibraryPage } from './library-page';

/**
 * Where a page leaves by goodbye: a timeout no run of these specs reaches (they time out first), so
 * a session freed can only have been freed by the goodbye, however slow the machine.
 */
const NO_EXPIRY = { intervalMs: 200, timeoutMs: 3_600_000 };
/** The crashed tab's timeout, set by the spec's own call just before the crash (its last word): short, so its silence is noticed within the test. */
const CRASH_TIMEOUT_MS = 2_000;

const steps = (page: Page): Promise<PlainStep[]> => page.evaluate(() => window.cohortLib.steps);

// One token per step (no drafts): a greedy run over repeated padding is what prompt lookup drafts best.
// Long enough never to end by itself within a spec: the spec stops A's (stopRuns) once it has seen what it needs.
const LONG_TOKENS = 2_000;
const longRequest = (maxTokens: number) => ({ params: { messages: [{ role: 'user' as const, content: 'Note 0000: this paragraph is unrelated padding.' }], max_tokens: maxTokens, temperature: 0, ignore_eos: true, speculation: 'off' as const } });

/**
 * Opens two pages on the shared engine (neither's heartbeat can expire); A and B each run a request
 * that does not end on its own within the spec: B's through B's library, or (`bTab`) through a tab of
 * the spec's own in B whose heartbeat the spec drives.
 */
async function twoTabs(context: BrowserContext, bTab = false) {
  const a = await context.newPage();
  const b = await context.newPage();
  expect(await openLibraryPage(a, { shared: true, heartbeat: NO_EXPIRY })).toBe('shared');
  expect(await openLibraryPage(b, { shared: true, heartbeat: NO_EXPIRY })).toBe('shared');
  const aRun = a.evaluate((spec) => window.cohortLib.run([spec]), longRequest(LONG_TOKENS));
  if (bTab) {
    await b.evaluate((ms) => window.cohortLib.tabJoin(ms), NO_EXPIRY.timeoutMs);
    await b.evaluate((maxNewTokens) => window.cohortLib.tabSend({ maxNewTokens, ignoreEos: true, sampling: { temperature: 0 }, speculation: 'off' }, 'Note 0000: this paragraph is unrelated padding.'), LONG_TOKENS);
  } else {
    void b.evaluate((spec) => window.cohortLib.run([spec]), longRequest(LONG_TOKENS)).catch(() => undefined); // B goes away mid-run
  }
  // A step with both pages' rows, seen by both: one engine
  await expect.poll(async () => (await steps(a)).some((s) => s.rows.length === 2), { timeout: 60_000 }).toBe(true);
  const shared = (await steps(a)).find((s) => s.rows.length === 2)!;
  await expect.poll(async () => (await steps(b)).find((s) => s.stepIndex === shared.stepIndex)?.rows.map((r) => r.sessionId)).toEqual(shared.rows.map((r) => r.sessionId));
  const sessionIds = shared.rows.map((r) => r.sessionId);
  // a port of A's own reaches the same worker and sees both sessions (the control for 'gone' below)
  for (const id of sessionIds) expect(await a.evaluate((i) => window.cohortLib.sharedSessionState(i), id)).not.toMatch(/^gone/);
  return { a, b, aRun, sessionIds };
}

/**
 * B's session is cancelled (the only one), its blocks come back, A runs on alone until the spec stops
 * it, and the engine forgets both sessions; returns ms from `startMs` to seeing B's cancelled.
 */
async function expectBFreed(a: Page, aRun: Promise<{ outcomes: Array<{ error: { name: string } | null }> }>, sessionIds: string[], startMs = Date.now()) {
  await expect.poll(async () => (await steps(a)).some((s) => s.finished.some((f) => f.reason === 'cancelled')), { timeout: 30_000, intervals: [50] }).toBe(true);
  const elapsedMs = Date.now() - startMs;
  const log = await steps(a);
  const at = log.findIndex((s) => s.finished.some((f) => f.reason === 'cancelled'));
  const bSession = log[at]!.finished.find((f) => f.reason === 'cancelled')!.sessionId;
  expect(sessionIds).toContain(bSession);
  expect(log[at]!.numRunning).toBe(1);
  // B's blocks all came back in that step: what is in use is A's alone (their prompt blocks are
  // shared, so comparing with the step before could not tell B's freed block from A's new one).
  // A row holds the blocks of the positions it fed; a verify row then gives back those only its
  // rejected drafts used, keeping its known tokens' (the fed one, the accepted drafts, the new one).
  const blockSize = await a.evaluate(() => window.cohortLib.blockSize());
  const aRow = log[at]!.rows.find((r) => r.sessionId !== bSession)!;
  const fed = aRow.position + aRow.numTokens;
  const kept = aRow.numDrafted ? Math.min(fed, aRow.position + 2 + aRow.numAccepted!) : fed;
  expect(log[at]!.kvBlocksUsed).toBe(Math.ceil(kept / blockSize));
  expect(await a.evaluate((id) => window.cohortLib.sharedSessionState(id), bSession)).toMatch(/^gone: .*session/i);
  const aSession = sessionIds.find((id) => id !== bSession)!;
  // A decodes on alone after B is gone, until the spec (not A's length) ends it
  await expect.poll(async () => (await steps(a)).slice(at + 1).filter((s) => s.rows.some((r) => r.sessionId === aSession)).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
  await a.evaluate(() => window.cohortLib.stopRuns());
  const outcome = (await aRun).outcomes[0]!;
  expect(outcome.error?.name).toBe('AbortError');
  const after = (await steps(a)).slice(at + 1);
  expect(after.every((s) => s.rows.every((r) => r.sessionId === aSession))).toBe(true);
  await expect.poll(() => a.evaluate((id) => window.cohortLib.sharedSessionState(id), aSession)).toMatch(/^gone: .*session/i);
  return elapsedMs;
}

test('two pages share one engine, and closing one ends its sessions at once (pagehide)', async ({ context }) => {
  const { a, b, aRun, sessionIds } = await twoTabs(context);
  await b.close();
  // B's heartbeat cannot expire in this run: freed at all, it was freed by its goodbye
  const elapsedMs = await expectBFreed(a, aRun, sessionIds);
  console.log(`closed page's session cancelled ${elapsedMs} ms after close`);
});

test("engine.terminate() in a shared engine takes only that page's sessions out", async ({ context }) => {
  const { a, b, aRun, sessionIds } = await twoTabs(context);
  await b.evaluate(() => window.cohortLib.terminate());
  await expectBFreed(a, aRun, sessionIds); // by the goodbye, as above
});

test('a page that crashes (no pagehide) has its sessions ended when its heartbeat stops', async ({ context }) => {
  // B's tab never pings by itself: its last call is the spec's hello, which sets the timeout just
  // before the crash. A runs until the spec stops it, so it is still running when B's silence is noticed.
  const { a, b, aRun, sessionIds } = await twoTabs(context, true);
  const lastCallMs = Date.now();
  await b.evaluate((ms) => window.cohortLib.tabHello(ms), CRASH_TIMEOUT_MS);
  const cdp = await context.newCDPSession(b);
  void cdp.send('Page.crash').catch(() => undefined); // answers never: the page is gone
  const elapsedMs = await expectBFreed(a, aRun, sessionIds, lastCallMs);
  console.log(`crashed page's session cancelled ${elapsedMs} ms after its last call`);
  // freed by the heartbeat timeout, counted from the tab's last call (at or after lastCallMs), never before
  expect(elapsedMs).toBeGreaterThanOrEqual(CRASH_TIMEOUT_MS);
});

test("createEngine's default falls back to a dedicated worker where SharedWorker is missing or fails to start", async ({ browser }) => {
  const missing = await browser.newContext();
  await missing.addInitScript(() => Reflect.deleteProperty(window, 'SharedWorker'));
  expect(await openLibraryPage(await missing.newPage())).toBe('dedicated');
  await missing.close();
  const failing = await browser.newContext();
  await failing.route('**/engine.shared-worker-*.js', (route) => route.fulfill({ status: 404, body: 'not found' }));
  expect(await openLibraryPage(await failing.newPage())).toBe('dedicated');
  await failing.close();
});
