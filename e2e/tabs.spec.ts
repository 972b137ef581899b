// Two tabs of the playground in one browser profile, as a person with two windows: every message
// sent or answered in either tab is there after both reload, closes hold, a crashed tab keeps its last save; storage faults said.
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { expectDone, openPlayground, send } from './playground-page';
import { niahLinesFor, niahPrompt } from '../src/protocol/niah';

/** Each pane's messages, in the pane order. */
async function transcripts(page: Page): Promise<string[][]> {
  const panes = page.getByTestId('session-pane');
  const out: string[][] = [];
  for (let i = 0; i < (await panes.count()); i++) out.push(await panes.nth(i).locator('.msg .msg-text').allTextContents());
  return out;
}

/** Every change so far saved (the page saves a moment after each change, and every interval while streaming). */
async function saved(page: Page): Promise<void> {
  await expect(page.locator('html')).toHaveAttribute('data-panes-pending', 'false');
}

async function newPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await openPlayground(page);
  return page;
}

/** Opens a pane, sends, waits for the answer. The new pane is found by its id, not its place: another tab's pane may arrive meanwhile. */
async function sendInNewPane(page: Page, text: string): Promise<void> {
  const panes = page.getByTestId('session-pane');
  const before = new Set(await panes.evaluateAll((els) => els.map((el) => el.getAttribute('data-session-id'))));
  await page.getByTestId('add-session').click();
  await expect.poll(async () => (await panes.evaluateAll((els) => els.map((el) => el.getAttribute('data-session-id')))).filter((id) => !before.has(id)).length).toBe(1);
  const ids = await panes.evaluateAll((els) => els.map((el) => el.getAttribute('data-session-id')));
  const pane = page.locator(`[data-testid="session-pane"][data-session-id="${ids.find((id) => !before.has(id))}"]`);
  await send(pane, text);
  await expectDone(pane);
  await expect(pane.locator('.msg.assistant .msg-text')).not.toHaveText('');
}

async function reloadBoth(a: Page, b: Page, expected: string[][]): Promise<void> {
  await Promise.all([saved(a), saved(b)]);
  for (const page of [a, b]) {
    await page.reload();
    await expect(page.getByTestId('model-info')).toHaveAttribute('data-state', 'ready');
    await expect(page.getByTestId('session-pane')).toHaveCount(expected.length);
    expect(await transcripts(page)).toEqual(expected);
  }
}

test('the issue\'s sequence: A sends, B (showing A\'s pane) sends in its own pane, A sends again; both reload: every message is there', async ({ context }) => {
  test.setTimeout(600_000);
  const a = await newPage(context);
  await sendInNewPane(a, 'remember MARK-A1');
  const b = await newPage(context);
  expect(await transcripts(b)).toEqual(await transcripts(a));
  await sendInNewPane(b, 'remember MARK-B1');
  // kept in step live: B's pane shows in A without a reload
  await expect(a.getByTestId('session-pane')).toHaveCount(2);
  await sendInNewPane(a, 'remember MARK-A2');
  await expect(b.getByTestId('session-pane')).toHaveCount(3);
  await Promise.all([saved(a), saved(b)]);
  const expected = await transcripts(a);
  expect(await transcripts(b)).toEqual(expected);
  expect(expected.map((lines) => lines[0])).toEqual(['remember MARK-A1', 'remember MARK-B1', 'remember MARK-A2']);
  for (const lines of expected) expect(lines).toHaveLength(2);
  await reloadBoth(a, b, expected);
});

test('the reverse order: both tabs open first, B sends before A, B reloads first: every message is there', async ({ context }) => {
  test.setTimeout(600_000);
  const a = await newPage(context);
  const b = await newPage(context);
  await sendInNewPane(b, 'remember MARK-B1');
  await expect(a.getByTestId('session-pane')).toHaveCount(1);
  await sendInNewPane(a, 'remember MARK-A1');
  await expect(b.getByTestId('session-pane')).toHaveCount(2); // A's pane reached B before B adds its next
  await sendInNewPane(b, 'remember MARK-B2');
  await expect(a.getByTestId('session-pane')).toHaveCount(3);
  await Promise.all([saved(a), saved(b)]);
  const expected = await transcripts(b);
  expect(expected.map((lines) => lines[0])).toEqual(['remember MARK-B1', 'remember MARK-A1', 'remember MARK-B2']);
  await reloadBoth(b, a, expected);
});

test('a pane closed in one tab while the other answers in another: the close holds, the answer is whole, after both reload', async ({ context }) => {
  test.setTimeout(600_000);
  const a = await newPage(context);
  await sendInNewPane(a, 'close me later');
  await a.getByTestId('add-session').click();
  const b = await newPage(context);
  await expect(b.getByTestId('session-pane')).toHaveCount(2);
  // by id: its position changes when the first pane closes
  const answeringId = await a.getByTestId('session-pane').nth(1).getAttribute('data-session-id');
  const answering = a.locator(`[data-session-id="${answeringId}"]`);
  // a long prompt: the turn is still running when the other tab closes a pane
  await send(answering, niahPrompt(niahLinesFor(1200), 5, 'PINE-2468'));
  await expect(answering).toHaveAttribute('data-state', /^(waiting|prefill|decode)$/);
  // B shows the pane as answered elsewhere and will not send into it meanwhile
  const inB = b.locator(`[data-session-id="${answeringId}"]`);
  await expect(inB).toHaveAttribute('data-elsewhere', 'true');
  await expect(inB.getByTestId('session-send')).toBeDisabled();
  await b.getByTestId('session-pane').first().getByTestId('session-close').click();
  await expect(a.getByTestId('session-pane')).toHaveCount(1);
  await expectDone(answering);
  await Promise.all([saved(a), saved(b)]);
  const expected = await transcripts(a);
  expect(expected).toHaveLength(1);
  expect(expected[0]![0]).toContain('PINE-2468');
  expect(expected[0]).toHaveLength(2);
  await expect(inB).not.toHaveAttribute('data-elsewhere', 'true');
  expect(await transcripts(b)).toEqual(expected);
  await reloadBoth(a, b, expected);
});

test('a tab that crashes mid-turn (no pagehide) keeps everything up to its last save', async ({ context }) => {
  test.setTimeout(600_000);
  const a = await newPage(context);
  await sendInNewPane(a, 'saved before the crash');
  await a.getByTestId('add-session').click();
  const pane = a.getByTestId('session-pane').nth(1);
  await send(pane, niahPrompt(niahLinesFor(600), 3, 'OAK-1357'));
  // what the page showed at some moment of the turn, then two save passes begun after it
  await expect(pane.locator('.msg.user .msg-text')).toHaveCount(1);
  const shown = await transcripts(a);
  const saves = Number(await a.locator('html').getAttribute('data-panes-saves'));
  await expect.poll(async () => Number(await a.locator('html').getAttribute('data-panes-saves'))).toBeGreaterThanOrEqual(saves + 2);
  const state = await pane.getAttribute('data-state');
  // the renderer dies at once: no pagehide, no last save (the CDP call itself never answers)
  const crashed = a.waitForEvent('crash');
  const cdp = await context.newCDPSession(a);
  void cdp.send('Page.crash').catch(() => undefined);
  await crashed;
  const after = await newPage(context);
  await expect(after.getByTestId('session-pane')).toHaveCount(2);
  const restored = await transcripts(after);
  expect(restored[0]).toEqual(shown[0]);
  // the prompt, and the reply as far as it had come (never less than was shown before the last saves)
  expect(restored[1]![0]).toEqual(shown[1]![0]);
  expect((restored[1]![1] ?? '').startsWith(shown[1]![1] ?? '')).toBe(true);
  test.info().annotations.push({ type: 'crashed while', description: state ?? '' });
});

test('refused storage says so once and the page works in memory; a record from a newer version is set aside and said', async ({ browser }) => {
  test.setTimeout(600_000);
  const refused = await browser.newContext();
  await refused.addInitScript(() => {
    IDBFactory.prototype.open = () => {
      throw new DOMException('The user denied permission to access the database.', 'InvalidStateError');
    };
  });
  const page = await refused.newPage();
  await openPlayground(page);
  await sendInNewPane(page, 'kept in memory');
  await sendInNewPane(page, 'still working');
  await expect(page.getByTestId('storage-notice')).toHaveCount(1);
  await expect(page.getByTestId('storage-notice')).toHaveAttribute('data-kind', 'memory');
  await expect(page.getByTestId('storage-notice')).toContainText('denied permission');
  expect((await transcripts(page)).map((lines) => lines[0])).toEqual(['kept in memory', 'still working']);
  await refused.close();

  const context = await browser.newContext();
  const tab = await context.newPage();
  await openPlayground(tab);
  await sendInNewPane(tab, 'readable');
  await saved(tab);
  const newer = { version: 3, paneId: 'p9-zz', label: '#9', lines: [{ role: 'user', text: 'from a newer page' }], rev: 1, somethingNew: true };
  await tab.evaluate(async (value) => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('keyval-store');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    await new Promise<void>((resolve, reject) => {
      const tx = db.transaction('keyval', 'readwrite');
      tx.objectStore('keyval').put(value, 'cohort-pane:p9-zz');
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
    });
    db.close();
  }, newer);
  await tab.reload();
  await expect(tab.getByTestId('storage-notice')).toHaveAttribute('data-kind', 'unreadable');
  await expect(tab.getByTestId('storage-notice')).toContainText('newer version');
  expect((await transcripts(tab)).map((lines) => lines[0])).toEqual(['readable']);
  await context.close();
});
