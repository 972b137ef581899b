// The soak's 60-second version (bench/soak.ts; `npm run bench:soak` runs it for 10 minutes): three tabs on
// the shared engine worker and two playground tabs under random clients, a frozen tab, a reload, a closed tab, the playground tabs reloaded.
import { expect, test } from '@playwright/test';
import { runSoak } from '../bench/soak';
import { lostMessages, renderMarkdown } from '../bench/soak-report';

test('a minute of random clients on the shared engine leaves nothing behind', async ({ browser, baseURL }, testInfo) => {
  test.setTimeout(300_000);
  const report = await runSoak(browser, {
    baseURL: baseURL!,
    durationMs: 60_000,
    seed: 7,
    sampleEveryMs: 20_000,
    heartbeat: { intervalMs: 250, timeoutMs: 3_000 },
    requestDeadlineMs: 60_000,
    clientsPerTab: 2,
    playground: true,
    commit: 'test',
    log: (line) => console.log(line),
  });
  await testInfo.attach('soak.md', { body: renderMarkdown(report, 20_000), contentType: 'text/markdown' });
  expect(report.requests.served).toBeGreaterThan(0);
  expect(report.consoleErrors).toEqual([]);
  expect(report.errors.unexpected, report.errors.unexpectedExamples.join('\n')).toEqual({});
  // the disturbances happened, and their errors were the expected ones
  expect(report.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['freeze', 'thaw', 'reload', 'reloaded', 'close', 'reopen', 'playground reload', 'playground reloaded']));
  expect(report.doubleEnds).toBe(0);
  expect(report.unended).toBe(0);
  expect(report.kvBlocksUsedAtEnd).toBe(0);
  expect(report.workerRestarts).toBe(0);
  // both playground tabs reloaded; every message sent in either tab, and every answer, still there
  expect(report.playground!.reloads.map((r) => r.tab)).toEqual([0, 1]);
  expect(report.playground!.reloads[0]!.sent).toBeGreaterThan(0);
  expect(lostMessages(report.playground!.reloads), report.playground!.reloads.map((r) => `tab ${r.tab} missing: ${r.missing.join(' ')}`).join('\n')).toBe(0);
});
