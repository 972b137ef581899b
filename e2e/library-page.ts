// Playwright side of testing/library.html: opens the page, starts the library's engine in it, runs
// requests through window.cohortLib and reads each session's tokens from the steps. No assertions.
import type { Page } from '@playwright/test';
import type { PlainStep, RequestSpec, RunOutcome } from '../testing/library/main';

export async function openLibraryPage(page: Page, options: { shared?: boolean | 'auto'; heartbeat?: { intervalMs?: number; timeoutMs?: number } } = {}): Promise<string> {
  page.on('pageerror', (err) => console.error(`[library page] ${err.message}`));
  await page.goto('/testing/library.html');
  await page.waitForFunction(() => document.body.dataset.ready === 'true');
  const started = await page.evaluate((o) => window.cohortLib.start(o), options);
  return started.workerKind;
}

export function runRequests(page: Page, specs: RequestSpec[]): Promise<RunOutcome> {
  return page.evaluate((s) => window.cohortLib.run(s), specs);
}

export interface SessionOutput {
  tokenIds: number[];
  text: string;
}

/** Each session's sampled tokens and text, in the order its rows came, from a run's steps. */
export function sessionOutputs(steps: PlainStep[]): Map<string, SessionOutput> {
  const outputs = new Map<string, SessionOutput>();
  const of = (id: string) => outputs.get(id) ?? outputs.set(id, { tokenIds: [], text: '' }).get(id)!;
  for (const step of steps) {
    for (const row of step.rows) {
      const out = of(row.sessionId);
      out.tokenIds.push(...row.newTokenIds);
      out.text += row.newText;
    }
    for (const done of step.finished) of(done.sessionId).text += done.newText;
  }
  return outputs;
}

/** The one session of a solo run (a request with one choice, alone in the engine). */
export function soloOutput(run: RunOutcome): SessionOutput {
  const outputs = [...sessionOutputs(run.steps).values()];
  if (outputs.length !== 1) throw new Error(`a solo run showed ${outputs.length} sessions`);
  return outputs[0]!;
}

/**
 * Every session's token ids in a run, sorted: streams carry text, not session ids, so a cohort is
 * compared with its solo runs as a whole (with each request's text compared on its own).
 */
export function tokenSequences(steps: PlainStep[]): string[] {
  return [...sessionOutputs(steps).values()].map((o) => o.tokenIds.join(' ')).sort();
}
